//===- RuntimeCallOpInterface.h - ops as libparcrt calls --------*- C++ -*-===//

#ifndef PARC_CONVERSION_RUNTIMECALLOPINTERFACE_H
#define PARC_CONVERSION_RUNTIMECALLOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include "parc/Conversion/RuntimeCallOpInterface.h.inc"

namespace mlir {
class DialectRegistry;
namespace parc {

/// Attaches the runtime calls of the parc and dist ops.
void registerRuntimeCallModels(DialectRegistry &registry);

} // namespace parc
} // namespace mlir

#endif // PARC_CONVERSION_RUNTIMECALLOPINTERFACE_H
