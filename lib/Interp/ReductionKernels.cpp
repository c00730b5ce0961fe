//===- ReductionKernels.cpp - reduce_sum, reduce_mean, reduce_max ---------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Folds `in` over `axes` into `out` (whose shape drops those axes or keeps
/// them as size 1) with `combine`, starting from `initial`; returns the
/// number of elements folded into each output.
template <typename Combine>
static int64_t reduceOver(const Tensor &in, ArrayRef<int64_t> axes,
                          Tensor &out, double initial, Combine combine) {
  SmallVector<bool> reduced(in.getRank(), false);
  int64_t count = 1;
  for (int64_t axis : axes) {
    reduced[axis] = true;
    count *= in.shape[axis];
  }
  std::fill(out.values.begin(), out.values.end(), initial);
  // The output position of an input index: its kept dimensions in order.
  SmallVector<int64_t> keptShape;
  for (int64_t dim = 0; dim < in.getRank(); ++dim)
    keptShape.push_back(reduced[dim] ? 1 : in.shape[dim]);
  SmallVector<int64_t> keptStrides = getRowMajorStrides(keptShape);
  forEachIndex(in.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t target = 0;
    for (int64_t dim = 0; dim < in.getRank(); ++dim)
      if (!reduced[dim])
        target += index[dim] * keptStrides[dim];
    out.values[target] = combine(out.values[target], in.values[linear]);
  });
  return count;
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

void mlir::parc::interp::attachReductionKernels(MLIRContext *context) {
  attachKernel<ReduceSumOp, reduceSumKernel>(context);
  attachKernel<ReduceMeanOp, reduceMeanKernel>(context);
  attachKernel<ReduceMaxOp, reduceMaxKernel>(context);
}
