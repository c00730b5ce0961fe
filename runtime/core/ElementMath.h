//===- ElementMath.h - per-element formulas of cpu and cuda -----*- C++ -*-===//
//
// The formulas both backends compute element by element, written once:
// the cpu backend instantiates most in double (rounding each result once,
// as the reference evaluator does) and the optimizers, which are bound by
// double division and square root there, in float as the cuda kernels do. A
// unit test runs the float instantiations on the host, so the cuda arithmetic
// is exercised where no GPU exists.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_ELEMENTMATH_H
#define PARCRT_CORE_ELEMENTMATH_H

#include "core/HostDevice.h"
#include "parcrt/Backend.h"

#include <cmath>
#include <cstdint>

namespace parcrt::math {

/// Whether `a predicate b` holds (NaN compares unequal to everything).
template <typename T>
PARCRT_HOST_DEVICE inline bool compare(Backend::Comparison predicate, T a,
                                       T b) {
  using Comparison = Backend::Comparison;
  switch (predicate) {
  case Comparison::Equal:
    return a == b;
  case Comparison::NotEqual:
    return a != b;
  case Comparison::Less:
    return a < b;
  case Comparison::LessEqual:
    return a <= b;
  case Comparison::Greater:
    return a > b;
  case Comparison::GreaterEqual:
    return a >= b;
  }
  return false;
}

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

/// The shape of one attention call: q [B, H, S, D], k [B, Hkv, T, D],
/// v [B, Hkv, T, E], an optional additive mask [B|1, H|1, S|1, T] (size-1
/// dimensions broadcast). Query head h reads key/value head h / (H / Hkv).
struct AttentionShape {
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;
  const float *mask = nullptr;
  int64_t maskBatchStride = 0, maskHeadStride = 0, maskQueryStride = 0;

  /// (b * Hkv + kv head) of query head `head` = b * H + h.
  PARCRT_HOST_DEVICE int64_t kvHeadOf(int64_t head) const {
    int64_t b = head / heads, h = head % heads;
    return b * kvHeads + h / (heads / kvHeads);
  }
  /// The first query head (b * H + h) of key/value head `kvHead`
  /// (b * Hkv + h); the group's H / Hkv heads follow it.
  PARCRT_HOST_DEVICE int64_t firstHeadOf(int64_t kvHead) const {
    return (kvHead / kvHeads) * heads + (kvHead % kvHeads) * (heads / kvHeads);
  }
  /// The mask's row of query `i` of query head `head` (= b * H + h), or
  /// null without a mask.
  PARCRT_HOST_DEVICE const float *maskRow(int64_t head, int64_t i) const {
    if (!mask)
      return nullptr;
    return mask + (head / heads) * maskBatchStride +
           (head % heads) * maskHeadStride + i * maskQueryStride;
  }
};

/// The shape of attention over q, k, v and (when `mask` is not null) mask.
inline AttentionShape attentionShape(const TensorRef &q, const TensorRef &k,
                                     const TensorRef &v,
                                     const TensorRef *mask) {
  AttentionShape shape{q.shape[0], q.shape[1], k.shape[1], q.shape[2],
                       k.shape[2], q.shape[3], v.shape[3]};
  if (mask) {
    shape.mask = static_cast<const float *>(mask->data);
    int64_t keys = mask->shape[3];
    shape.maskQueryStride = mask->shape[2] == 1 ? 0 : keys;
    shape.maskHeadStride = mask->shape[1] == 1 ? 0 : mask->shape[2] * keys;
    shape.maskBatchStride =
        mask->shape[0] == 1 ? 0 : mask->shape[1] * mask->shape[2] * keys;
  }
  return shape;
}

/// d/dx of `kind` at `x`.
template <typename T>
PARCRT_HOST_DEVICE inline T activationDerivative(Backend::Activation kind,
                                                 T x) {
  using std::erf;
  using std::exp;
  using std::tanh;
  using Activation = Backend::Activation;
  switch (kind) {
  case Activation::Relu:
    // PyTorch's threshold_backward: a NaN x passes the gradient through.
    return x <= T(0) ? T(0) : T(1);
  case Activation::Sigmoid: {
    T s = T(1) / (T(1) + exp(-x));
    return s * (T(1) - s);
  }
  case Activation::Silu: {
    T s = T(1) / (T(1) + exp(-x));
    return s * (T(1) + x * (T(1) - s));
  }
  case Activation::Tanh: {
    T t = tanh(x);
    return T(1) - t * t;
  }
  case Activation::GeluErf: {
    T cdf = T(0.5) * (T(1) + erf(x * T(0.70710678118654752440)));
    T pdf = exp(T(-0.5) * x * x) * T(0.39894228040143267794); // 1/sqrt(2 pi)
    return cdf + x * pdf;
  }
  case Activation::GeluTanh: {
    const T c = T(0.79788456080286535588); // sqrt(2/pi)
    T inner = c * (x + T(0.044715) * x * x * x);
    T t = tanh(inner);
    return T(0.5) * (T(1) + t) +
           T(0.5) * x * (T(1) - t * t) * c * (T(1) + T(3 * 0.044715) * x * x);
  }
  }
  return T(0);
}

/// AdamW's constants for one step t, from the hyperparameters in double and
/// then rounded to T: in float, 1 - 0.999f is 4.7e-5 off (relatively),
/// which the second moment would carry. The bias corrections are folded
/// into the step size and the second moment's scale, and the weight decay
/// into a factor, so that an element costs one division and one square
/// root.
template <typename T> struct AdamWStep {
  T beta1, beta2, oneMinusBeta1, oneMinusBeta2, epsilon;
  /// 1 - lr weight_decay.
  T decay;
  /// lr / (1 - beta1^t).
  T stepSize;
  /// 1 / (1 - beta2^t).
  T secondMomentScale;
};
template <typename T>
PARCRT_HOST_DEVICE inline AdamWStep<T>
adamwStep(double lr, double beta1, double beta2, double epsilon,
          double weightDecay, double step) {
  using std::pow;
  return {T(beta1),
          T(beta2),
          T(1 - beta1),
          T(1 - beta2),
          T(epsilon),
          T(1 - lr * weightDecay),
          T(lr / (1 - pow(beta1, step))),
          T(1 / (1 - pow(beta2, step)))};
}

/// One AdamW element: the moments' and the parameter's next values,
/// m' = beta1 m + (1 - beta1) g, v' = beta2 v + (1 - beta2) g^2 and
/// p' = p - lr (m' / (1 - beta1^t) / (sqrt(v' / (1 - beta2^t)) + epsilon)
///             + weight_decay p).
template <typename T> struct AdamWElement {
  T param, firstMoment, secondMoment;
};
template <typename T>
PARCRT_HOST_DEVICE inline AdamWElement<T>
adamwElement(T param, T grad, T firstMoment, T secondMoment,
             const AdamWStep<T> &step) {
  using std::sqrt;
  T m = step.beta1 * firstMoment + step.oneMinusBeta1 * grad;
  T v = step.beta2 * secondMoment + step.oneMinusBeta2 * grad * grad;
  T next =
      param * step.decay -
      step.stepSize * m / (sqrt(v * step.secondMomentScale) + step.epsilon);
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
