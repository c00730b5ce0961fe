//===- ElementMath.h - per-element formulas of cpu and cuda -----*- C++ -*-===//
//
// The formulas both backends compute element by element, written once:
// the cpu backend instantiates them in double (rounding each result once,
// as the reference evaluator does), the cuda kernels in float. A unit test
// runs the float instantiations on the host, so the cuda arithmetic is
// exercised where no GPU exists.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_ELEMENTMATH_H
#define PARCRT_CORE_ELEMENTMATH_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define PARCRT_HOST_DEVICE __host__ __device__
#else
#define PARCRT_HOST_DEVICE
#endif

namespace parcrt::math {

/// The keys query `i` of `queries` sees among `keys`: all of them, or under
/// causal masking those up to its own position, keys aligned with the last
/// queries (query i sees key j iff j <= i + keys - queries).
PARCRT_HOST_DEVICE inline int64_t visibleKeys(bool causal, int64_t i,
                                              int64_t queries, int64_t keys) {
  if (!causal)
    return keys;
  int64_t visible = i + keys - queries + 1;
  return visible < 0 ? 0 : visible > keys ? keys : visible;
}

/// The first query that sees key `j` (the inverse of visibleKeys).
PARCRT_HOST_DEVICE inline int64_t
firstQuerySeeing(bool causal, int64_t j, int64_t queries, int64_t keys) {
  if (!causal)
    return 0;
  int64_t first = j - (keys - queries);
  return first < 0 ? 0 : first;
}

/// One AdamW element: the moments' and the parameter's next values, with
/// `correction1` = 1 - beta1^t and `correction2` = 1 - beta2^t. The caller
/// passes 1 - beta1 and 1 - beta2 computed in double: in float, 1 - 0.999f
/// is 4.7e-5 off (relatively), which the second moment would carry.
template <typename T> struct AdamWElement {
  T param, firstMoment, secondMoment;
};
template <typename T>
PARCRT_HOST_DEVICE inline AdamWElement<T>
adamwElement(T param, T grad, T firstMoment, T secondMoment, T lr, T beta1,
             T beta2, T oneMinusBeta1, T oneMinusBeta2, T epsilon,
             T weightDecay, T correction1, T correction2) {
  using std::sqrt;
  T m = beta1 * firstMoment + oneMinusBeta1 * grad;
  T v = beta2 * secondMoment + oneMinusBeta2 * grad * grad;
  T next = param - lr * (m / correction1 / (sqrt(v / correction2) + epsilon) +
                         weightDecay * param);
  return {next, m, v};
}

/// One SGD element: b' = momentum b + g, p' = p - lr b'.
template <typename T> struct SgdElement { T param, buffer; };
template <typename T>
PARCRT_HOST_DEVICE inline SgdElement<T> sgdElement(T param, T grad, T buffer,
                                                   T lr, T momentum) {
  T b = momentum * buffer + grad;
  return {param - lr * b, b};
}

} // namespace parcrt::math

#endif // PARCRT_CORE_ELEMENTMATH_H
