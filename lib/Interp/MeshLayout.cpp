//===- MeshLayout.cpp - ranks and coordinates of a mesh -------------------===//

#include "parc/Interp/MeshLayout.h"

using namespace mlir;
using namespace mlir::parc::interp;

static std::vector<int64_t> getSizes(dist::MeshOp mesh) {
  return std::vector<int64_t>(mesh.getAxisSizes().begin(),
                              mesh.getAxisSizes().end());
}

MeshLayout::MeshLayout(dist::MeshOp mesh) : shape(getSizes(mesh)) {
  for (StringRef name : mesh.getAxisNames().getAsValueRange<StringAttr>())
    names.push_back(name.str());
}

MeshLayout::MeshLayout(ArrayRef<dist::MeshOp> stageMeshes)
    : MeshLayout(stageMeshes.front()) {
  std::vector<::parc::MeshShape> shapes;
  for (dist::MeshOp mesh : stageMeshes)
    shapes.emplace_back(getSizes(mesh));
  stages = ::parc::StagedMeshes(std::move(shapes));
}

const ::parc::MeshShape &MeshLayout::getShape(int64_t rank) const {
  return stages.empty() ? shape : stages.getMesh(stages.getStage(rank));
}

int64_t MeshLayout::getMeshRank(int64_t rank) const {
  return stages.empty() ? rank : stages.getMeshRank(rank);
}

int64_t MeshLayout::getNumRanks() const {
  return stages.empty() ? shape.getNumRanks() : stages.getNumRanks();
}

size_t MeshLayout::axisPosition(StringRef axis) const {
  return llvm::find(names, axis) - names.begin();
}

std::vector<size_t> MeshLayout::axisPositions(ArrayRef<StringRef> axes) const {
  std::vector<size_t> positions;
  for (StringRef axis : axes)
    positions.push_back(axisPosition(axis));
  return positions;
}

int64_t MeshLayout::getCoordinate(int64_t rank, StringRef axis) const {
  return getShape(rank).getCoordinate(getMeshRank(rank), axisPosition(axis));
}

int64_t MeshLayout::getPeerRank(int64_t rank, ArrayRef<StringRef> axes,
                                ArrayRef<int64_t> coordinates) const {
  std::vector<int64_t> peer = getShape(rank).getCoordinates(getMeshRank(rank));
  for (auto [axis, coordinate] : llvm::zip_equal(axes, coordinates)) {
    size_t position = axisPosition(axis);
    if (position >= peer.size())
      return -1;
    peer[position] = coordinate;
  }
  // On stages of their own the stage axis is the first.
  if (!stages.empty() &&
      (peer[0] < 0 || peer[0] >= int64_t(stages.getNumStages())))
    return -1;
  size_t stage = stages.empty() ? 0 : peer[0];
  const ::parc::MeshShape &peerShape =
      stages.empty() ? shape : stages.getMesh(stage);
  for (auto [coordinate, size] : llvm::zip_equal(peer, peerShape.getSizes()))
    if (coordinate < 0 || coordinate >= size)
      return -1;
  return stages.empty() ? peerShape.getRank(peer)
                        : stages.getWorldRank(stage, peerShape.getRank(peer));
}

int64_t MeshLayout::getGroupSize(int64_t rank, ArrayRef<StringRef> axes) const {
  return getShape(rank).getGroupSize(axisPositions(axes));
}

int64_t MeshLayout::getIndexInGroup(int64_t rank,
                                    ArrayRef<StringRef> axes) const {
  return getShape(rank).getIndexInGroup(getMeshRank(rank), axisPositions(axes));
}

SmallVector<int64_t> MeshLayout::getGroup(int64_t rank,
                                          ArrayRef<StringRef> axes) const {
  SmallVector<int64_t> group;
  size_t stage = stages.empty() ? 0 : stages.getStage(rank);
  for (int64_t member :
       getShape(rank).getGroup(getMeshRank(rank), axisPositions(axes)))
    group.push_back(stages.empty() ? member
                                   : stages.getWorldRank(stage, member));
  return group;
}

SmallVector<StringRef> mlir::parc::interp::axisNames(ArrayAttr axes) {
  return llvm::to_vector(axes.getAsValueRange<StringAttr>());
}
