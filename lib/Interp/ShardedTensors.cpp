//===- ShardedTensors.cpp - global tensors and their rank parts -----------===//

#include "parc/Interp/ShardedTensors.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::parc::interp;

SmallVector<int64_t>
mlir::parc::interp::getGlobalShape(ArrayRef<int64_t> localShape,
                                   dist::ShardingAttr sharding,
                                   const MeshLayout &mesh) {
  SmallVector<int64_t> shape(localShape);
  for (auto [dim, size] : llvm::enumerate(shape))
    size *= mesh.getGroupSize(
        /*rank=*/0, axisNames(cast<ArrayAttr>(sharding.getDims()[dim])));
  return shape;
}

/// Where rank `rank`'s block of each dimension starts.
static SmallVector<int64_t> blockOffsets(ArrayRef<int64_t> localShape,
                                         dist::ShardingAttr sharding,
                                         const MeshLayout &mesh,
                                         int64_t rank) {
  SmallVector<int64_t> offsets;
  for (auto [dim, size] : llvm::enumerate(localShape))
    offsets.push_back(
        size * mesh.getIndexInGroup(
                   rank, axisNames(cast<ArrayAttr>(sharding.getDims()[dim]))));
  return offsets;
}

Tensor mlir::parc::interp::sliceForRank(const Tensor &global,
                                        dist::ShardingAttr sharding,
                                        const MeshLayout &mesh, int64_t rank) {
  SmallVector<int64_t> localShape(global.shape);
  for (auto [dim, size] : llvm::enumerate(localShape))
    size /= mesh.getGroupSize(
        rank, axisNames(cast<ArrayAttr>(sharding.getDims()[dim])));
  SmallVector<int64_t> offsets =
      blockOffsets(localShape, sharding, mesh, rank);
  Tensor local(localShape);
  forEachIndex(localShape, [&](ArrayRef<int64_t> index, int64_t linear) {
    SmallVector<int64_t> source(index);
    for (auto [i, offset] : llvm::zip_equal(source, offsets))
      i += offset;
    local.values[linear] = global.at(source);
  });
  return local;
}

Tensor mlir::parc::interp::assembleFromRanks(ArrayRef<Tensor> parts,
                                             dist::ShardingAttr sharding,
                                             const MeshLayout &mesh) {
  ArrayRef<int64_t> localShape = parts.front().shape;
  Tensor global(getGlobalShape(localShape, sharding, mesh));
  // Axes the layout does not name hold copies: read coordinate 0 only.
  llvm::StringSet<> named;
  for (Attribute axes : sharding.getDims())
    for (StringRef axis : axisNames(cast<ArrayAttr>(axes)))
      named.insert(axis);
  for (StringRef axis : axisNames(sharding.getPartial()))
    named.insert(axis);
  for (auto [rank, each] : llvm::enumerate(parts)) {
    // Lambdas capture variables, not structured bindings (before C++20).
    const Tensor &part = each;
    bool copy = false;
    for (const std::string &axis : mesh.getAxisNames())
      copy |= !named.contains(axis) && mesh.getCoordinate(rank, axis) != 0;
    if (copy)
      continue;
    SmallVector<int64_t> offsets =
        blockOffsets(localShape, sharding, mesh, rank);
    forEachIndex(localShape, [&](ArrayRef<int64_t> index, int64_t linear) {
      SmallVector<int64_t> target(index);
      for (auto [i, offset] : llvm::zip_equal(target, offsets))
        i += offset;
      global.at(target) += part.values[linear];
    });
  }
  return global;
}
