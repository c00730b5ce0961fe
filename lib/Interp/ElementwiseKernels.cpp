//===- ElementwiseKernels.cpp - broadcasting arithmetic and activations ---===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Applies `fn` to operand elements paired by numpy broadcasting.
template <typename Fn>
static void broadcastBinary(const Tensor &lhs, const Tensor &rhs,
                            Tensor &result, Fn fn) {
  int64_t rank = result.getRank();
  // Strides of each operand in the result's index space: 0 where the operand
  // has a stretched (size-1 or missing) dimension.
  auto alignedStrides = [&](const Tensor &operand) {
    SmallVector<int64_t> strides(rank, 0);
    SmallVector<int64_t> own = operand.getStrides();
    int64_t offset = rank - operand.getRank();
    for (int64_t dim = 0; dim < operand.getRank(); ++dim)
      if (operand.shape[dim] != 1)
        strides[offset + dim] = own[dim];
    return strides;
  };
  SmallVector<int64_t> lhsStrides = alignedStrides(lhs);
  SmallVector<int64_t> rhsStrides = alignedStrides(rhs);
  forEachIndex(result.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t lhsIndex = 0, rhsIndex = 0;
    for (int64_t dim = 0; dim < rank; ++dim) {
      lhsIndex += index[dim] * lhsStrides[dim];
      rhsIndex += index[dim] * rhsStrides[dim];
    }
    result.values[linear] = fn(lhs.values[lhsIndex], rhs.values[rhsIndex]);
  });
}

template <typename OpT, double (*Fn)(double, double)>
static LogicalResult binaryKernel(OpT, ArrayRef<const Tensor *> operands,
                                  MutableArrayRef<Tensor> results) {
  broadcastBinary(*operands[0], *operands[1], results[0], Fn);
  return success();
}

template <typename OpT, double (*Fn)(double)>
static LogicalResult unaryKernel(OpT, ArrayRef<const Tensor *> operands,
                                 MutableArrayRef<Tensor> results) {
  for (auto [out, in] : llvm::zip_equal(results[0].values,
                                        operands[0]->values))
    out = Fn(in);
  return success();
}

static double plus(double a, double b) { return a + b; }
static double minus(double a, double b) { return a - b; }
static double times(double a, double b) { return a * b; }
static double over(double a, double b) { return a / b; }

static double power(double a, double b) { return std::pow(a, b); }
static double squareRoot(double x) { return std::sqrt(x); }
static double errorFunction(double x) { return std::erf(x); }

static double negate(double x) { return -x; }
static double exponential(double x) { return std::exp(x); }
static double logarithm(double x) { return std::log(x); }
static double hyperbolicTangent(double x) { return std::tanh(x); }
// NaN stays NaN, as in PyTorch.
static double relu(double x) { return x < 0 ? 0.0 : x; }
static double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
static double silu(double x) { return x * sigmoid(x); }

static LogicalResult geluKernel(GeluOp op, ArrayRef<const Tensor *> operands,
                                MutableArrayRef<Tensor> results) {
  bool tanhForm = op.getApproximation() == GeluApproximation::Tanh;
  for (auto [out, x] : llvm::zip_equal(results[0].values,
                                       operands[0]->values)) {
    if (tanhForm)
      out = 0.5 * x *
            (1.0 + std::tanh(std::sqrt(2.0 / M_PI) *
                             (x + 0.044715 * x * x * x)));
    else
      out = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  }
  return success();
}

/// The strides of `operand` in the index space of a broadcast result of
/// rank `rank`: 0 where the operand has a stretched (size-1 or missing)
/// dimension.
static SmallVector<int64_t> broadcastStrides(const Tensor &operand,
                                             int64_t rank) {
  SmallVector<int64_t> strides(rank, 0);
  SmallVector<int64_t> own = operand.getStrides();
  int64_t offset = rank - operand.getRank();
  for (int64_t dim = 0; dim < operand.getRank(); ++dim)
    if (operand.shape[dim] != 1)
      strides[offset + dim] = own[dim];
  return strides;
}

static LogicalResult selectKernel(SelectOp, ArrayRef<const Tensor *> operands,
                                  MutableArrayRef<Tensor> results) {
  Tensor &result = results[0];
  int64_t rank = result.getRank();
  SmallVector<SmallVector<int64_t>> strides;
  for (const Tensor *operand : operands)
    strides.push_back(broadcastStrides(*operand, rank));
  forEachIndex(result.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t at[3] = {0, 0, 0};
    for (int64_t dim = 0; dim < rank; ++dim)
      for (int i = 0; i < 3; ++i)
        at[i] += index[dim] * strides[i][dim];
    result.values[linear] = operands[0]->values[at[0]] != 0
                                ? operands[1]->values[at[1]]
                                : operands[2]->values[at[2]];
  });
  return success();
}

static LogicalResult compareKernel(CompareOp op,
                                   ArrayRef<const Tensor *> operands,
                                   MutableArrayRef<Tensor> results) {
  ComparisonPredicate predicate = op.getPredicate();
  broadcastBinary(*operands[0], *operands[1], results[0],
                  [&](double a, double b) -> double {
                    switch (predicate) {
                    case ComparisonPredicate::Eq:
                      return a == b;
                    case ComparisonPredicate::Ne:
                      return a != b;
                    case ComparisonPredicate::Lt:
                      return a < b;
                    case ComparisonPredicate::Le:
                      return a <= b;
                    case ComparisonPredicate::Gt:
                      return a > b;
                    case ComparisonPredicate::Ge:
                      return a >= b;
                    }
                    llvm_unreachable("unknown comparison predicate");
                  });
  return success();
}

static LogicalResult castKernel(CastOp op, ArrayRef<const Tensor *> operands,
                                MutableArrayRef<Tensor> results) {
  Type element = op.getType().getElementType();
  auto floatType = dyn_cast<FloatType>(element);
  for (auto [out, in] : llvm::zip_equal(results[0].values,
                                        operands[0]->values)) {
    if (!floatType) {
      out = std::trunc(in);
      continue;
    }
    // Round to the target's precision (nearest, ties to even).
    APFloat value(in);
    bool lost;
    value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &lost);
    out = value.convertToDouble();
  }
  return success();
}

void mlir::parc::interp::attachElementwiseKernels(MLIRContext *context) {
  attachKernel<AddOp, binaryKernel<AddOp, plus>>(context);
  attachKernel<SubOp, binaryKernel<SubOp, minus>>(context);
  attachKernel<MulOp, binaryKernel<MulOp, times>>(context);
  attachKernel<DivOp, binaryKernel<DivOp, over>>(context);
  attachKernel<NegOp, unaryKernel<NegOp, negate>>(context);
  attachKernel<ExpOp, unaryKernel<ExpOp, exponential>>(context);
  attachKernel<TanhOp, unaryKernel<TanhOp, hyperbolicTangent>>(context);
  attachKernel<LogOp, unaryKernel<LogOp, logarithm>>(context);
  attachKernel<ReluOp, unaryKernel<ReluOp, relu>>(context);
  attachKernel<SigmoidOp, unaryKernel<SigmoidOp, sigmoid>>(context);
  attachKernel<SiluOp, unaryKernel<SiluOp, silu>>(context);
  attachKernel<GeluOp, geluKernel>(context);
  attachKernel<PowOp, binaryKernel<PowOp, power>>(context);
  attachKernel<SqrtOp, unaryKernel<SqrtOp, squareRoot>>(context);
  attachKernel<ErfOp, unaryKernel<ErfOp, errorFunction>>(context);
  attachKernel<SelectOp, selectKernel>(context);
  attachKernel<CompareOp, compareKernel>(context);
  attachKernel<CastOp, castKernel>(context);
}
