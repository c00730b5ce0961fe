//===- ElementwiseKernels.cpp - broadcasting arithmetic and activations ---===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"

#include "core/ElementMath.h"
#include "core/Fatal.h"
#include "parcrt/Values.h"

#include <cmath>
#include <cstring>
#include <string>

using namespace parcrt;

/// Strides of `operand` in the index space of `result` (numpy broadcasting:
/// dimensions are right-aligned; a size-1 or missing one has stride 0).
static std::vector<int64_t> alignedStrides(const TensorRef &operand,
                                           const TensorRef &result) {
  std::vector<int64_t> strides(result.rank, 0);
  std::vector<int64_t> own = cpu::rowMajorStrides(operand);
  int offset = result.rank - operand.rank;
  for (int dim = 0; dim < operand.rank; ++dim)
    if (operand.shape[dim] != 1)
      strides[offset + dim] = own[dim];
  return strides;
}

/// out[i] = fn(lhs[l], rhs[r]) over the result's elements, `l` and `r`
/// the operands' elements paired with element i by numpy broadcasting.
template <typename In, typename Out, typename Fn>
static void broadcast(const TensorRef *t, Fn fn) {
  const auto *lhs = static_cast<const In *>(t[0].data);
  const auto *rhs = static_cast<const In *>(t[1].data);
  auto *out = static_cast<Out *>(t[2].data);
  int64_t count = t[2].numElements();
  if (t[0].numElements() == count && t[1].numElements() == count) {
    for (int64_t i = 0; i < count; ++i)
      out[i] = fn(lhs[i], rhs[i]);
    return;
  }
  std::vector<int64_t> lhsStrides = alignedStrides(t[0], t[2]);
  std::vector<int64_t> rhsStrides = alignedStrides(t[1], t[2]);
  cpu::forEachIndex(t[2].shape, t[2].rank,
                    [&](const int64_t *index, int64_t linear) {
                      int64_t l = 0, r = 0;
                      for (int dim = 0; dim < t[2].rank; ++dim) {
                        l += index[dim] * lhsStrides[dim];
                        r += index[dim] * rhsStrides[dim];
                      }
                      out[linear] = fn(lhs[l], rhs[r]);
                    });
}

template <typename Fn> static void broadcast(const TensorRef *t, Fn fn) {
  broadcast<float, float>(t, fn);
}

void cpu::binary(char op, const TensorRef *t) {
  requireF32("elementwise arithmetic", t, 3);
  switch (op) {
  case '+':
    return broadcast(t, [](float a, float b) { return a + b; });
  case '-':
    return broadcast(t, [](float a, float b) { return a - b; });
  case '*':
    return broadcast(t, [](float a, float b) { return a * b; });
  case '^':
    // In double and rounded once, as the reference evaluator does.
    return broadcast(t, [](float a, float b) {
      return static_cast<float>(
          std::pow(static_cast<double>(a), static_cast<double>(b)));
    });
  default:
    return broadcast(t, [](float a, float b) { return a / b; });
  }
}

void cpu::select(const TensorRef *t) {
  const TensorRef &result = t[3];
  bool floatCondition = t[0].dtype == PARCRT_F32;
  if (!floatCondition)
    requireInteger("select", "the condition", t[0]);
  if (t[1].dtype != result.dtype || t[2].dtype != result.dtype)
    fatal(std::string("select: operands ") + dtypeName(t[1].dtype) + " and " +
          dtypeName(t[2].dtype) + ", result " + dtypeName(result.dtype) +
          ": dtypes must match");
  std::vector<int64_t> strides[3];
  for (int i = 0; i < 3; ++i)
    strides[i] = alignedStrides(t[i], result);
  size_t elementBytes = dtypeBytes(result.dtype);
  const auto *onTrue = static_cast<const char *>(t[1].data);
  const auto *onFalse = static_cast<const char *>(t[2].data);
  auto *out = static_cast<char *>(result.data);
  cpu::forEachIndex(
      result.shape, result.rank, [&](const int64_t *index, int64_t linear) {
        int64_t at[3] = {0, 0, 0};
        for (int dim = 0; dim < result.rank; ++dim)
          for (int i = 0; i < 3; ++i)
            at[i] += index[dim] * strides[i][dim];
        // A float condition is true when nonzero, NaN included.
        bool condition = floatCondition
                             ? static_cast<const float *>(t[0].data)[at[0]] != 0
                             : integerAt(t[0], at[0]) != 0;
        const char *chosen = condition ? onTrue + at[1] * elementBytes
                                       : onFalse + at[2] * elementBytes;
        std::memcpy(out + linear * elementBytes, chosen, elementBytes);
      });
}

template <typename T>
static void compareEach(const TensorRef *t, Backend::Comparison predicate) {
  broadcast<T, int32_t>(
      t, [&](T a, T b) { return math::compare(predicate, a, b); });
}

void cpu::compare(const TensorRef *t, Comparison predicate) {
  if (t[0].dtype != t[1].dtype || t[2].dtype != PARCRT_I32)
    fatal(std::string("compare: operands ") + dtypeName(t[0].dtype) + " and " +
          dtypeName(t[1].dtype) + ", result " + dtypeName(t[2].dtype) +
          ": the operands' dtypes must match and the result must be i32");
  switch (t[0].dtype) {
  case PARCRT_F32:
    return compareEach<float>(t, predicate);
  case PARCRT_I32:
    return compareEach<int32_t>(t, predicate);
  case PARCRT_I64:
    return compareEach<int64_t>(t, predicate);
  default:
    fatal(std::string("compare: unsupported dtype ") + dtypeName(t[0].dtype));
  }
}

template <typename From, typename To, typename Convert>
static void convertEach(const TensorRef *t, int64_t count, Convert convert) {
  const auto *in = static_cast<const From *>(t[0].data);
  auto *out = static_cast<To *>(t[1].data);
  for (int64_t i = 0; i < count; ++i)
    out[i] = convert(in[i]);
}

void cpu::cast(const TensorRef *t) {
  int64_t count = t[0].numElements();
  // Mixed precision's widenings and roundings (core/Widening.h) around
  // every op: direct loops, not through doubles.
  if (t[0].dtype == PARCRT_BF16 && t[1].dtype == PARCRT_F32)
    return convertEach<uint16_t, float>(t, count, bfloat16ToFloat);
  if (t[0].dtype == PARCRT_F32 && t[1].dtype == PARCRT_BF16)
    return convertEach<float, uint16_t>(t, count, floatToBfloat16);
  encodeValues(decodeValues(t[0].data, t[0].dtype, count), t[1].dtype,
               t[1].data);
}

template <typename Fn> static void map(const TensorRef *t, Fn fn) {
  const auto *in = static_cast<const float *>(t[0].data);
  auto *out = static_cast<float *>(t[1].data);
  int64_t count = t[1].numElements();
  for (int64_t i = 0; i < count; ++i)
    out[i] = static_cast<float>(fn(static_cast<double>(in[i])));
}

void cpu::unary(Backend::Unary op, const TensorRef *t) {
  requireF32("activation", t, 2);
  // Computed in double and rounded once, as the reference evaluator does.
  using Unary = Backend::Unary;
  switch (op) {
  case Unary::Neg:
    return map(t, [](double x) { return -x; });
  case Unary::Exp:
    return map(t, [](double x) { return std::exp(x); });
  case Unary::Log:
    return map(t, [](double x) { return std::log(x); });
  case Unary::Tanh:
    return map(t, [](double x) { return std::tanh(x); });
  case Unary::Relu:
    // NaN stays NaN, as in PyTorch.
    return map(t, [](double x) { return x < 0 ? 0.0 : x; });
  case Unary::Sigmoid:
    return map(t, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  case Unary::Silu:
    return map(t, [](double x) { return x * (1.0 / (1.0 + std::exp(-x))); });
  case Unary::GeluErf:
    return map(t, [](double x) {
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    });
  case Unary::Sqrt:
    return map(t, [](double x) { return std::sqrt(x); });
  case Unary::Erf:
    return map(t, [](double x) { return std::erf(x); });
  case Unary::GeluTanh:
    return map(t, [](double x) {
      return 0.5 * x *
             (1.0 +
              std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    });
  }
}
