//===- ShardLayout.h - where a rank's block lies in a tensor ----*- C++ -*-===//
//
// The layout of lib/Interp/ShardedTensors.cpp: a dimension split over axes
// [a, b] is cut into |a| * |b| blocks and a rank holds block
// indexInGroup([a, b]); ranks that differ only in axes the sharding does not
// name hold copies; over `partial` axes they hold addends.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_SHARDLAYOUT_H
#define PARCRT_MAIN_SHARDLAYOUT_H

#include "main/Program.h"
#include "parcrt/Backend.h"

namespace parcrt {

/// The row-major index in the global tensor of every element of `mesh.rank`'s
/// local block, in local row-major order.
std::vector<int64_t> globalIndices(const BoundaryTensor &tensor,
                                   const MeshInfo &mesh);

/// Whether `mesh.rank` holds a copy that another rank (coordinate 0 on every
/// axis the layout does not name) holds already.
bool holdsCopy(const BoundaryTensor &tensor, const MeshInfo &mesh);

/// The global tensor from every rank's local values (`parts[r]` for rank r):
/// blocks are placed, copies read once, addends over `partial` axes summed.
std::vector<double>
assembleFromRanks(const std::vector<std::vector<double>> &parts,
                  const BoundaryTensor &tensor, const MeshInfo &mesh);

} // namespace parcrt

#endif // PARCRT_MAIN_SHARDLAYOUT_H
