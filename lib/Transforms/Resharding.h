//===- Resharding.h - collectives between two layouts -----------*- C++ -*-===//

#ifndef PARC_LIB_TRANSFORMS_RESHARDING_H
#define PARC_LIB_TRANSFORMS_RESHARDING_H

#include "parc/Transforms/TensorSharding.h"

#include "mlir/IR/Builders.h"

namespace mlir::parc {

/// Emits the collectives that turn `value`, the local part of a tensor of
/// `globalType` laid out as `from`, into the local part laid out as `to`.
/// Fails (with a diagnostic at `loc`) only when `to` asks for a pending sum
/// that `from` does not have.
FailureOr<Value> reshard(OpBuilder &builder, Location loc, dist::MeshOp mesh,
                         Value value, RankedTensorType globalType,
                         TensorSharding from, const TensorSharding &to);

} // namespace mlir::parc

#endif // PARC_LIB_TRANSFORMS_RESHARDING_H
