//===- OptimizerKernels.cpp - AdamW, SGD and gradient clipping ------------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

static LogicalResult adamwKernel(AdamWUpdateOp op,
                                 ArrayRef<const Tensor *> operands,
                                 MutableArrayRef<Tensor> results) {
  double lr = op.getLr().convertToDouble();
  double beta1 = op.getBeta1().convertToDouble();
  double beta2 = op.getBeta2().convertToDouble();
  double epsilon = op.getEpsilon().convertToDouble();
  double decay = op.getWeightDecay().convertToDouble();
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
