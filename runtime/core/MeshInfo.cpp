//===- MeshInfo.cpp - ranks and coordinates of the mesh -------------------===//
//
// The same layout as the reference evaluator (lib/Interp/MeshLayout.cpp):
// rank r's coordinates are its mixed-radix digits, last axis minor; a group
// over axes A is ordered by the linearized coordinates over A, first axis
// major.
//
//===----------------------------------------------------------------------===//

#include "parcrt/Backend.h"

using namespace parcrt;

int64_t MeshInfo::numRanks() const {
  int64_t count = 1;
  for (int64_t size : axisSizes)
    count *= size;
  return count;
}

int64_t MeshInfo::coordinate(int axis) const {
  int64_t rest = rank;
  for (size_t i = axisSizes.size(); i-- > static_cast<size_t>(axis) + 1;)
    rest /= axisSizes[i];
  return rest % axisSizes[axis];
}

int64_t MeshInfo::indexInGroup(const std::vector<int> &axes) const {
  int64_t index = 0;
  for (int axis : axes)
    index = index * axisSizes[axis] + coordinate(axis);
  return index;
}

std::vector<int> MeshInfo::group(const std::vector<int> &axes) const {
  std::vector<int64_t> coordinates;
  for (size_t axis = 0; axis < axisSizes.size(); ++axis)
    coordinates.push_back(coordinate(axis));
  int64_t groupSize = 1;
  for (int axis : axes)
    groupSize *= axisSizes[axis];
  std::vector<int> members;
  for (int64_t member = 0; member < groupSize; ++member) {
    // Spell `member` in the axes' mixed radix, last axis minor.
    int64_t rest = member;
    for (size_t i = axes.size(); i-- > 0;) {
      coordinates[axes[i]] = rest % axisSizes[axes[i]];
      rest /= axisSizes[axes[i]];
    }
    int64_t linear = 0;
    for (size_t axis = 0; axis < axisSizes.size(); ++axis)
      linear = linear * axisSizes[axis] + coordinates[axis];
    members.push_back(static_cast<int>(linear));
  }
  return members;
}
