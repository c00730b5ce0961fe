//===- MeshLayout.cpp - ranks and coordinates of a mesh -------------------===//

#include "parc/Interp/MeshLayout.h"

using namespace mlir;
using namespace mlir::parc::interp;

MeshLayout::MeshLayout(dist::MeshOp mesh) {
  for (auto [name, size] :
       llvm::zip_equal(mesh.getAxisNames().getAsValueRange<StringAttr>(),
                       mesh.getAxisSizes())) {
    names.push_back(name.str());
    sizes.push_back(size);
    numRanks *= size;
  }
}

unsigned MeshLayout::axisPosition(StringRef axis) const {
  return llvm::find(names, axis) - names.begin();
}

int64_t MeshLayout::getCoordinate(int64_t rank, StringRef axis) const {
  unsigned position = axisPosition(axis);
  for (unsigned i = sizes.size(); i-- > position + 1;)
    rank /= sizes[i];
  return rank % sizes[position];
}

int64_t MeshLayout::getGroupSize(ArrayRef<StringRef> axes) const {
  int64_t size = 1;
  for (StringRef axis : axes)
    size *= sizes[axisPosition(axis)];
  return size;
}

int64_t MeshLayout::getIndexInGroup(int64_t rank,
                                    ArrayRef<StringRef> axes) const {
  int64_t index = 0;
  for (StringRef axis : axes)
    index = index * sizes[axisPosition(axis)] + getCoordinate(rank, axis);
  return index;
}

SmallVector<int64_t> MeshLayout::getGroup(int64_t rank,
                                          ArrayRef<StringRef> axes) const {
  SmallVector<int64_t> coordinates;
  for (const std::string &name : names)
    coordinates.push_back(getCoordinate(rank, name));
  SmallVector<int64_t> group;
  for (int64_t member = 0; member < getGroupSize(axes); ++member) {
    // Spell `member` in the axes' mixed radix, last axis minor.
    int64_t rest = member;
    for (unsigned i = axes.size(); i-- > 0;) {
      int64_t size = sizes[axisPosition(axes[i])];
      coordinates[axisPosition(axes[i])] = rest % size;
      rest /= size;
    }
    int64_t linear = 0;
    for (auto [coordinate, size] : llvm::zip_equal(coordinates, sizes))
      linear = linear * size + coordinate;
    group.push_back(linear);
  }
  return group;
}

SmallVector<StringRef> mlir::parc::interp::axisNames(ArrayAttr axes) {
  return llvm::to_vector(axes.getAsValueRange<StringAttr>());
}
