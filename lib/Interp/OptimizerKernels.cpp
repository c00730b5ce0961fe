//===- OptimizerKernels.cpp - AdamW, SGD and gradient clipping ------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Whether an update's `skip` operand (at `index`, if present) is set.
static bool skips(Value skip, ArrayRef<const Tensor *> operands,
                  unsigned index) {
  return skip && operands[index]->values[0] != 0;
}

/// A skipped update: each result is its state operand.
static void keepState(ArrayRef<unsigned> stateOperands,
                      ArrayRef<const Tensor *> operands,
                      MutableArrayRef<Tensor> results) {
  for (auto [result, operand] : llvm::zip_equal(results, stateOperands))
    result.values = operands[operand]->values;
}

static LogicalResult adamwKernel(AdamWUpdateOp op,
                                 ArrayRef<const Tensor *> operands,
                                 MutableArrayRef<Tensor> results) {
  double lr = op.getLr().convertToDouble();
  double beta1 = op.getBeta1().convertToDouble();
  double beta2 = op.getBeta2().convertToDouble();
  double epsilon = op.getEpsilon().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
  if (skips(op.getSkip(), operands, 5)) {
    keepState({0, 2, 3}, operands, results);
    return success();
  }
  double step = operands[4]->values[0];
  double correction1 = 1 - std::pow(beta1, step);
  double correction2 = 1 - std::pow(beta2, step);
  for (int64_t i = 0; i < operands[0]->getNumElements(); ++i) {
    double p = operands[0]->values[i], g = operands[1]->values[i];
    double m = beta1 * operands[2]->values[i] + (1 - beta1) * g;
    double v = beta2 * operands[3]->values[i] + (1 - beta2) * g * g;
    results[0].values[i] =
        p - lr * (m / correction1 / (std::sqrt(v / correction2) + epsilon) +
                  decay * p);
    results[1].values[i] = m;
    results[2].values[i] = v;
  }
  return success();
}

static LogicalResult sgdKernel(SgdUpdateOp op,
                               ArrayRef<const Tensor *> operands,
                               MutableArrayRef<Tensor> results) {
  double lr = op.getLr().convertToDouble();
  double momentum = op.getMomentum().convertToDouble();
  if (skips(op.getSkip(), operands, 3)) {
    keepState({0, 2}, operands, results);
    return success();
  }
  for (int64_t i = 0; i < operands[0]->getNumElements(); ++i) {
    double buffer = momentum * operands[2]->values[i] + operands[1]->values[i];
    results[0].values[i] = operands[0]->values[i] - lr * buffer;
    results[1].values[i] = buffer;
  }
  return success();
}

static LogicalResult clipCoefficientKernel(ClipCoefficientOp op,
                                           ArrayRef<const Tensor *> operands,
                                           MutableArrayRef<Tensor> results) {
  double norm = std::sqrt(operands[0]->values[0]);
  results[0].values[0] =
      std::min(1.0, op.getMaxNorm().convertToDouble() / (norm + 1e-6));
  return success();
}

void mlir::parc::interp::attachOptimizerKernels(MLIRContext *context) {
  attachKernel<AdamWUpdateOp, adamwKernel>(context);
  attachKernel<SgdUpdateOp, sgdKernel>(context);
  attachKernel<ClipCoefficientOp, clipCoefficientKernel>(context);
}
