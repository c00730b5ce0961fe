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

void attachElementwiseKernels(MLIRContext *context);
void attachLinearAlgebraKernels(MLIRContext *context);
void attachNormalizationKernels(MLIRContext *context);
void attachLayoutKernels(MLIRContext *context);
void attachReductionKernels(MLIRContext *context);
void attachLossKernels(MLIRContext *context);
void attachGradientKernels(MLIRContext *context);
void attachOptimizerKernels(MLIRContext *context);

} // namespace mlir::parc::interp

#endif // PARC_LIB_INTERP_KERNELS_H
