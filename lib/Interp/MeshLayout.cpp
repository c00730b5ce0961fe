//===- MeshLayout.cpp - ranks and coordinates of a mesh -------------------===//

#include "parc/Interp/MeshLayout.h"

using namespace mlir;
using namespace mlir::parc::interp;

MeshLayout::MeshLayout(dist::MeshOp mesh) {
  std::vector<int64_t> sizes;
  for (auto [name, size] :
       llvm::zip_equal(mesh.getAxisNames().getAsValueRange<StringAttr>(),
                       mesh.getAxisSizes())) {
    names.push_back(name.str());
    sizes.push_back(size);
  }
  shape = ::parc::MeshShape(std::move(sizes));
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
  return shape.getCoordinate(rank, axisPosition(axis));
}

int64_t MeshLayout::getRankWithCoordinate(int64_t rank, StringRef axis,
                                          int64_t coordinate) const {
  return shape.getRankWithCoordinate(rank, axisPosition(axis), coordinate);
}

int64_t MeshLayout::getGroupSize(ArrayRef<StringRef> axes) const {
  return shape.getGroupSize(axisPositions(axes));
}

int64_t MeshLayout::getIndexInGroup(int64_t rank,
                                    ArrayRef<StringRef> axes) const {
  return shape.getIndexInGroup(rank, axisPositions(axes));
}

SmallVector<int64_t> MeshLayout::getGroup(int64_t rank,
                                          ArrayRef<StringRef> axes) const {
  std::vector<int64_t> group = shape.getGroup(rank, axisPositions(axes));
  return SmallVector<int64_t>(group.begin(), group.end());
}

SmallVector<StringRef> mlir::parc::interp::axisNames(ArrayAttr axes) {
  return llvm::to_vector(axes.getAsValueRange<StringAttr>());
}
