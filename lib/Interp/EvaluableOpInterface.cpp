//===- EvaluableOpInterface.cpp - reference kernels -----------------------===//

#include "parc/Interp/EvaluableOpInterface.h"
#include "Kernels.h"

#include "mlir/IR/DialectRegistry.h"
#include "parc/IR/ParcDialect.h"

using namespace mlir;
using namespace mlir::parc::interp;

#include "parc/Interp/EvaluableOpInterface.cpp.inc"

void mlir::parc::interp::registerEvaluableOpInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, ParcDialect *) {
    attachElementwiseKernels(context);
    attachLinearAlgebraKernels(context);
    attachNormalizationKernels(context);
    attachLayoutKernels(context);
    attachReductionKernels(context);
    attachLossKernels(context);
    attachGradientKernels(context);
    attachConvolutionKernels(context);
    attachOptimizerKernels(context);
  });
}
