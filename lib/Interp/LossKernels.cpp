//===- LossKernels.cpp - cross_entropy ------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

static LogicalResult crossEntropyKernel(CrossEntropyOp op,
                                        ArrayRef<const Tensor *> operands,
                                        MutableArrayRef<Tensor> results) {
  const Tensor &logits = *operands[0], &labels = *operands[1];
  int64_t classes = logits.shape.back();
  int64_t rows = labels.getNumElements();
  double total = 0;
  for (int64_t row = 0; row < rows; ++row) {
    double label = labels.values[row];
    if (failed(checkLabel(op, row, label, classes)))
      return failure();
    const double *x = &logits.values[row * classes];
    double maxValue = *std::max_element(x, x + classes);
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(x[c] - maxValue);
    total += maxValue + std::log(sum) - x[static_cast<int64_t>(label)];
  }
  // The mean over no rows is NaN, as in PyTorch.
  results[0].values[0] =
      rows > 0 ? total / rows : std::numeric_limits<double>::quiet_NaN();
  return success();
}

void mlir::parc::interp::attachLossKernels(MLIRContext *context) {
  attachKernel<CrossEntropyOp, crossEntropyKernel>(context);
}
