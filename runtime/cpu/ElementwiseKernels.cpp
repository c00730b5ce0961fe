//===- ElementwiseKernels.cpp - broadcasting arithmetic and activations ---===//

#include "cpu/Blocks.h"
#include "cpu/Dnnl.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include "core/ElementMath.h"
#include "core/Fatal.h"
#include "parcrt/Values.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

using namespace parcrt;

/// out[i] = fn(lhs[l], rhs[r]) over the result's elements, `l` and `r`
/// the operands' elements paired with element i by numpy broadcasting.
template <typename In, typename Out, typename Fn>
static void broadcast(const TensorRef *t, Fn fn) {
  const auto *lhs = static_cast<const In *>(t[0].data);
  const auto *rhs = static_cast<const In *>(t[1].data);
  auto *out = static_cast<Out *>(t[2].data);
  int64_t count = t[2].numElements();
  if (t[0].numElements() == count && t[1].numElements() == count) {
    cpu::parallelFor(count, cpu::elementGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = fn(lhs[i], rhs[i]);
    });
    return;
  }
  if (count == 0)
    return;
  // Row by row: along a row each operand steps by 1 or stays (0). Adjacent
  // dimensions that both operands walk as one are one, so that rows are as
  // long as the layouts allow: [N, C, H, W] by a batch norm's [1, C, 1, 1]
  // has rows of H * W, not of W.
  const TensorRef &result = t[2];
  std::vector<int64_t> shape(result.shape, result.shape + result.rank);
  std::vector<int64_t> lhsStrides = cpu::broadcastStrides(t[0], result);
  std::vector<int64_t> rhsStrides = cpu::broadcastStrides(t[1], result);
  cpu::mergeDimensions(shape, {&lhsStrides, &rhsStrides});
  int rank = static_cast<int>(shape.size());
  int64_t length = shape.back();
  int64_t lhsStep = lhsStrides.back(), rhsStep = rhsStrides.back();
  auto rows = [&](int64_t begin, int64_t end) {
    cpu::forEachRow<2>(shape.data(), rank,
                       {lhsStrides.data(), rhsStrides.data()}, begin, end,
                       [&](int64_t row, const std::array<int64_t, 2> &at) {
                         const In *l = lhs + at[0], *r = rhs + at[1];
                         Out *o = out + row * length;
                         if (lhsStep == 1 && rhsStep == 0)
                           for (int64_t j = 0; j < length; ++j)
                             o[j] = fn(l[j], r[0]);
                         else if (lhsStep == 0 && rhsStep == 1)
                           for (int64_t j = 0; j < length; ++j)
                             o[j] = fn(l[0], r[j]);
                         else
                           for (int64_t j = 0; j < length; ++j)
                             o[j] = fn(l[j * lhsStep], r[j * rhsStep]);
                       });
  };
  cpu::parallelFor(count / length, cpu::rowGrain(length), rows);
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
    strides[i] = cpu::broadcastStrides(t[i], result);
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
  cpu::parallelFor(t[1].numElements(), cpu::elementGrain,
                   [&](int64_t begin, int64_t end) {
                     for (int64_t i = begin; i < end; ++i)
                       out[i] = fn(in[i]);
                   });
}

void cpu::unary(Backend::Unary op, const TensorRef *t) {
  requireF32("activation", t, 2);
  using Unary = Backend::Unary;
  using ::dnnl::algorithm;
  std::optional<dnnl::Eltwise> f;
  switch (op) {
  case Unary::Neg:
    return map(t, [](float x) { return -x; });
  case Unary::Relu:
    // NaN stays NaN, as in PyTorch.
    return map(t, [](float x) { return x < 0 ? 0.0f : x; });
  case Unary::Erf:
    // oneDNN has no erf of its own; in double and rounded once.
    return map(t, [](float x) {
      return static_cast<float>(std::erf(static_cast<double>(x)));
    });
  case Unary::Log:
    // oneDNN's log is 1.4e-6 off at 1, where the result is 0: libm's.
    return map(t, [](float x) { return std::log(x); });
  case Unary::Exp:
    f = dnnl::Eltwise{algorithm::eltwise_exp};
    break;
  case Unary::Sqrt:
    f = dnnl::Eltwise{algorithm::eltwise_sqrt};
    break;
  case Unary::Tanh:
    f = dnnl::eltwiseOf(Activation::Tanh);
    break;
  case Unary::Sigmoid:
    f = dnnl::eltwiseOf(Activation::Sigmoid);
    break;
  case Unary::Silu:
    f = dnnl::eltwiseOf(Activation::Silu);
    break;
  case Unary::GeluErf:
    f = dnnl::eltwiseOf(Activation::GeluErf);
    break;
  case Unary::GeluTanh:
    f = dnnl::eltwiseOf(Activation::GeluTanh);
    break;
  }
  dnnl::eltwise(*f, static_cast<const float *>(t[0].data),
                static_cast<float *>(t[1].data), t[1].numElements());
}
