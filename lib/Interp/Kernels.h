//===- Kernels.h - reference kernels, grouped by op family ------*- C++ -*-===//
//
// Each family file defines plain functions `LogicalResult kernel(OpT op,
// ArrayRef<const Tensor *> operands, MutableArrayRef<Tensor> results)` and
// attaches them to their ops with `attachKernel`.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_INTERP_KERNELS_H
#define PARC_LIB_INTERP_KERNELS_H

#include "parc/IR/ParcOps.h"
#include "parc/Interp/EvaluableOpInterface.h"

#include <cmath>

namespace mlir::parc::interp {

template <typename OpT>
using KernelFn = LogicalResult (*)(OpT, ArrayRef<const Tensor *>,
                                   MutableArrayRef<Tensor>);

/// The external model that forwards EvaluableOpInterface to `Kernel`.
template <typename OpT, KernelFn<OpT> Kernel>
struct KernelModel
    : public EvaluableOpInterface::ExternalModel<KernelModel<OpT, Kernel>,
                                                 OpT> {
  LogicalResult evaluate(Operation *op, ArrayRef<const Tensor *> operands,
                         MutableArrayRef<Tensor> results) const {
    return Kernel(cast<OpT>(op), operands, results);
  }
};

template <typename OpT, KernelFn<OpT> Kernel>
void attachKernel(MLIRContext *context) {
  OpT::template attachInterface<KernelModel<OpT, Kernel>>(*context);
}

/// Fails with a diagnostic on `op` unless `label` (element `row` of a labels
/// tensor) is a class of [0, classes); printed as read, since a label such
/// as 1e30 has no int64 value.
inline LogicalResult checkLabel(Operation *op, int64_t row, double label,
                                int64_t classes) {
  if (label >= 0 && label < classes)
    return success();
  InFlightDiagnostic diag = op->emitOpError()
                            << "labels element " << row << " is ";
  if (std::abs(label) < 0x1p62 && label == std::trunc(label))
    diag << static_cast<int64_t>(label);
  else
    diag << label;
  return diag << ", outside the classes [0, " << classes << ")";
}

void attachElementwiseKernels(MLIRContext *context);
void attachLinearAlgebraKernels(MLIRContext *context);
void attachNormalizationKernels(MLIRContext *context);
void attachLayoutKernels(MLIRContext *context);
void attachReductionKernels(MLIRContext *context);
void attachLossKernels(MLIRContext *context);
void attachGradientKernels(MLIRContext *context);
void attachConvolutionKernels(MLIRContext *context);
void attachOptimizerKernels(MLIRContext *context);

} // namespace mlir::parc::interp

#endif // PARC_LIB_INTERP_KERNELS_H
