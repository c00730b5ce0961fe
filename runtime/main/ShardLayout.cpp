//===- ShardLayout.cpp - where a rank's block lies in a tensor ------------===//

#include "main/ShardLayout.h"

using namespace parcrt;

std::vector<int64_t> parcrt::globalIndices(const BoundaryTensor &tensor,
                                           const MeshInfo &mesh) {
  size_t rank = tensor.localShape.size();
  std::vector<int64_t> offsets(rank);
  for (size_t dim = 0; dim < rank; ++dim)
    offsets[dim] =
        tensor.localShape[dim] * mesh.indexInGroup(tensor.sharding[dim]);
  std::vector<int64_t> indices;
  int64_t count = tensor.localElements();
  indices.reserve(count);
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t global = 0;
    for (size_t dim = 0; dim < rank; ++dim)
      global = global * tensor.globalShape[dim] + offsets[dim] + index[dim];
    indices.push_back(global);
    for (size_t dim = rank; dim-- > 0;) {
      if (++index[dim] < tensor.localShape[dim])
        break;
      index[dim] = 0;
    }
  }
  return indices;
}

bool parcrt::holdsCopy(const BoundaryTensor &tensor, const MeshInfo &mesh) {
  std::vector<bool> named(mesh.axisSizes.size(), false);
  for (const std::vector<int> &axes : tensor.sharding)
    for (int axis : axes)
      named[axis] = true;
  for (int axis : tensor.partial)
    named[axis] = true;
  for (size_t axis = 0; axis < named.size(); ++axis)
    if (!named[axis] && mesh.coordinate(axis) != 0)
      return true;
  return false;
}

std::vector<double>
parcrt::assembleFromRanks(const std::vector<std::vector<double>> &parts,
                          const BoundaryTensor &tensor, const MeshInfo &mesh) {
  std::vector<double> global(tensor.globalElements(), 0.0);
  MeshInfo member = mesh;
  for (size_t rank = 0; rank < parts.size(); ++rank) {
    member.rank = static_cast<int>(rank);
    if (holdsCopy(tensor, member))
      continue;
    std::vector<int64_t> indices = globalIndices(tensor, member);
    for (size_t i = 0; i < indices.size(); ++i)
      global[indices[i]] += parts[rank][i];
  }
  return global;
}
