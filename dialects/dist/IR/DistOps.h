//===- DistOps.h - mesh, annotations and collectives ------------*- C++ -*-===//

#ifndef DIST_IR_DISTOPS_H
#define DIST_IR_DISTOPS_H

#include "dist/IR/DistAttrs.h"
#include "dist/IR/DistDialect.h"
#include "dist/IR/DistInterfaces.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dist/IR/DistOps.h.inc"

namespace mlir::dist {

/// The mesh `name` refers to from `from`, or null.
MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr name);

/// Checks `sharding` against a tensor of `type` on `mesh`: one entry per
/// dimension, known axes, and axis sizes that divide the dimensions they
/// split. `what` names the tensor in messages ("argument #2 'wte.weight'").
LogicalResult verifyShardingForType(ShardingAttr sharding, ShapedType type,
                                    MeshOp mesh, llvm::StringRef what,
                                    function_ref<InFlightDiagnostic()> emitError);

/// The collectives, for code that reasons about them before they exist (the
/// resharding planner, the cost model).
enum class CollectiveKind { AllReduce, ReduceScatter, AllToAll, AllGather, AllSlice };

/// Bytes each rank sends in the bandwidth-optimal (ring) algorithm for a
/// collective over `bufferBytes` (CommunicationOpInterface's buffer) in a group
/// of `groupSize` ranks: all_reduce 2(n-1)/n of the buffer, all_gather,
/// reduce_scatter and all_to_all (n-1)/n, all_slice nothing.
double getRingTrafficBytes(CollectiveKind kind, int64_t bufferBytes,
                           int64_t groupSize);

} // namespace mlir::dist

#endif // DIST_IR_DISTOPS_H
