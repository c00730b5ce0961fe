//===- Autodiff.h - reverse-mode gradients of a scalar loss -----*- C++ -*-===//

#ifndef PARC_TRANSFORMS_AUTODIFF_H
#define PARC_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::parc {

/// Appends to the results of `func` (whose first result is a scalar loss)
/// the gradient of the loss with respect to each `param` argument, in
/// argument order, named `<param>.grad`. The backward pass starts from
/// `lossGradient` (a scalar of the loss's type: a loss scale), or 1 when it
/// is null. Emits a located error for an op without a gradient rule.
LogicalResult appendGradients(func::FuncOp func, Value lossGradient = {});

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_AUTODIFF_H
