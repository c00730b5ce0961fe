//===- LocalPartitionOpInterface.h - smarter local forms --------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_LOCALPARTITIONOPINTERFACE_H
#define PARC_TRANSFORMS_LOCALPARTITIONOPINTERFACE_H

#include "parc/Transforms/FactorSharding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "parc/Transforms/LocalPartitionOpInterface.h.inc"

namespace mlir {
class DialectRegistry;
namespace parc {

/// Attaches the local forms of the vocab-parallel embedding and loss and of
/// slice.
void registerLocalPartitionModels(DialectRegistry &registry);

/// The default local form: `op` on `operands` with the local result types
/// that `results` imply.
SmallVector<Value> cloneOnLocalShapes(OpBuilder &builder, Operation *op,
                                      ValueRange operands,
                                      ArrayRef<TensorSharding> results,
                                      dist::MeshOp mesh);

} // namespace parc
} // namespace mlir

#endif // PARC_TRANSFORMS_LOCALPARTITIONOPINTERFACE_H
