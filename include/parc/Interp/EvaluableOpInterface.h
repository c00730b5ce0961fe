//===- EvaluableOpInterface.h - reference kernels ---------------*- C++ -*-===//

#ifndef PARC_INTERP_EVALUABLEOPINTERFACE_H
#define PARC_INTERP_EVALUABLEOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "parc/Interp/Tensor.h"

#include "parc/Interp/EvaluableOpInterface.h.inc"

namespace mlir {
class DialectRegistry;
namespace parc::interp {

/// Attaches the reference kernels to the ops of the parc dialect.
void registerEvaluableOpInterfaceModels(DialectRegistry &registry);

} // namespace parc::interp
} // namespace mlir

#endif // PARC_INTERP_EVALUABLEOPINTERFACE_H
