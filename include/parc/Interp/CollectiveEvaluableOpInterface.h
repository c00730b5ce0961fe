//===- CollectiveEvaluableOpInterface.h - collectives -----------*- C++ -*-===//

#ifndef PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_H
#define PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_H

#include "parc/Interp/MeshLayout.h"
#include "parc/Interp/Tensor.h"

#include "mlir/IR/OpDefinition.h"

#include "parc/Interp/CollectiveEvaluableOpInterface.h.inc"

namespace mlir {
class DialectRegistry;
namespace parc::interp {

/// Attaches the exact collective semantics to the dist ops.
void registerCollectiveEvaluableOpInterfaceModels(DialectRegistry &registry);

} // namespace parc::interp
} // namespace mlir

#endif // PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_H
