//===- ShardedTensors.h - global tensors and their rank parts ---*- C++ -*-===//
//
// A dimension split over axes [a, b] is cut into |a| * |b| blocks; rank r
// holds block (coord_a(r) * |b| + coord_b(r)). Ranks that differ only in
// axes the sharding does not name hold copies; over `partial` axes they
// hold addends of the global value.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_SHARDEDTENSORS_H
#define PARC_INTERP_SHARDEDTENSORS_H

#include "parc/Interp/MeshLayout.h"
#include "parc/Interp/Tensor.h"

namespace mlir::parc::interp {

/// The shape of the global tensor whose parts have `localShape` on `mesh`
/// (one mesh, not stages on meshes of their own).
SmallVector<int64_t> getGlobalShape(ArrayRef<int64_t> localShape,
                                    dist::ShardingAttr sharding,
                                    const MeshLayout &mesh);

/// Rank `rank`'s part of `global` (a pending sum is not split: every rank
/// gets the global values, which only replicated layouts ask for).
Tensor sliceForRank(const Tensor &global, dist::ShardingAttr sharding,
                    const MeshLayout &mesh, int64_t rank);

/// The global tensor from every rank's part of `mesh` (one mesh): blocks are
/// placed, copies are read once, and pending sums over `partial` axes are
/// added up.
Tensor assembleFromRanks(ArrayRef<Tensor> parts, dist::ShardingAttr sharding,
                         const MeshLayout &mesh);

} // namespace mlir::parc::interp

#endif // PARC_INTERP_SHARDEDTENSORS_H
