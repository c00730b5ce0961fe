//===- ReductionKernels.cpp - reduce_sum and reduce_mean ------------------===//

#include "Kernels.h"

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Sums `in` over `axes` into `out`, whose shape drops those axes or keeps
/// them as size 1; returns the number of elements summed into each output.
static int64_t sumOver(const Tensor &in, ArrayRef<int64_t> axes, Tensor &out) {
  SmallVector<bool> reduced(in.getRank(), false);
  int64_t count = 1;
  for (int64_t axis : axes) {
    reduced[axis] = true;
    count *= in.shape[axis];
  }
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
    out.values[target] += in.values[linear];
  });
  return count;
}

static LogicalResult reduceSumKernel(ReduceSumOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  sumOver(*operands[0], op.getAxes(), results[0]);
  return success();
}

static LogicalResult reduceMeanKernel(ReduceMeanOp op,
                                      ArrayRef<const Tensor *> operands,
                                      MutableArrayRef<Tensor> results) {
  int64_t count = sumOver(*operands[0], op.getAxes(), results[0]);
  for (double &value : results[0].values)
    value /= count;
  return success();
}

void mlir::parc::interp::attachReductionKernels(MLIRContext *context) {
  attachKernel<ReduceSumOp, reduceSumKernel>(context);
  attachKernel<ReduceMeanOp, reduceMeanKernel>(context);
}
