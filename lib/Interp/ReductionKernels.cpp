//===- ReductionKernels.cpp - reduce_sum, _mean, _max, _log_sum_exp -------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Calls `visit(target, value)` for each element of `in`, with `target` the
/// position of its total in an output over the kept axes of `in` (whose
/// shape drops `axes` or keeps them as size 1); returns the number of
/// elements that reach each output.
template <typename Visit>
static int64_t visitReduced(const Tensor &in, ArrayRef<int64_t> axes,
                            Visit visit) {
  SmallVector<bool> reduced(in.getRank(), false);
  int64_t count = 1;
  for (int64_t axis : axes) {
    reduced[axis] = true;
    count *= in.shape[axis];
  }
  SmallVector<int64_t> keptShape;
  for (int64_t dim = 0; dim < in.getRank(); ++dim)
    keptShape.push_back(reduced[dim] ? 1 : in.shape[dim]);
  SmallVector<int64_t> keptStrides = getRowMajorStrides(keptShape);
  forEachIndex(in.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t target = 0;
    for (int64_t dim = 0; dim < in.getRank(); ++dim)
      if (!reduced[dim])
        target += index[dim] * keptStrides[dim];
    visit(target, in.values[linear]);
  });
  return count;
}

/// Folds `in` over `axes` into `out` with `combine`, starting from
/// `initial`; returns the number of elements folded into each output.
template <typename Combine>
static int64_t reduceOver(const Tensor &in, ArrayRef<int64_t> axes, Tensor &out,
                          double initial, Combine combine) {
  std::fill(out.values.begin(), out.values.end(), initial);
  return visitReduced(in, axes, [&](int64_t target, double value) {
    out.values[target] = combine(out.values[target], value);
  });
}

static double plus(double a, double b) { return a + b; }
static double maximum(double a, double b) { return std::max(a, b); }

static LogicalResult reduceSumKernel(ReduceSumOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  reduceOver(*operands[0], op.getAxes(), results[0], 0.0, plus);
  return success();
}

static LogicalResult reduceMeanKernel(ReduceMeanOp op,
                                      ArrayRef<const Tensor *> operands,
                                      MutableArrayRef<Tensor> results) {
  int64_t count = reduceOver(*operands[0], op.getAxes(), results[0], 0.0, plus);
  for (double &value : results[0].values)
    value /= count;
  return success();
}

static LogicalResult reduceMaxKernel(ReduceMaxOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  reduceOver(*operands[0], op.getAxes(), results[0], -INFINITY, maximum);
  return success();
}

static LogicalResult reduceLogSumExpKernel(ReduceLogSumExpOp op,
                                           ArrayRef<const Tensor *> operands,
                                           MutableArrayRef<Tensor> results) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  reduceOver(in, op.getAxes(), out, -INFINITY, maximum);
  std::vector<double> shifts = out.values, sums(out.values.size(), 0.0);
  visitReduced(in, op.getAxes(), [&](int64_t target, double value) {
    // An all -inf line sums nothing (its result is -inf); +inf stays +inf.
    if (std::isfinite(shifts[target]))
      sums[target] += std::exp(value - shifts[target]);
  });
  for (auto [value, shift, sum] : llvm::zip_equal(out.values, shifts, sums))
    if (std::isfinite(shift))
      value = shift + std::log(sum);
  return success();
}

void mlir::parc::interp::attachReductionKernels(MLIRContext *context) {
  attachKernel<ReduceSumOp, reduceSumKernel>(context);
  attachKernel<ReduceMeanOp, reduceMeanKernel>(context);
  attachKernel<ReduceMaxOp, reduceMaxKernel>(context);
  attachKernel<ReduceLogSumExpOp, reduceLogSumExpKernel>(context);
}
