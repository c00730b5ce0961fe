//===- MeshInfo.cpp - ranks and coordinates of the mesh -------------------===//
//
// The project's one mesh arithmetic (parc/Support/MeshArithmetic.h), which
// the reference evaluator and parc-compile's manifest use too.
//
//===----------------------------------------------------------------------===//

#include "parcrt/Backend.h"

#include "parc/Support/MeshArithmetic.h"

using namespace parcrt;

static std::vector<size_t> positions(const std::vector<int> &axes) {
  return std::vector<size_t>(axes.begin(), axes.end());
}

int64_t MeshInfo::numRanks() const {
  return parc::MeshShape(axisSizes).getNumRanks();
}

int64_t MeshInfo::coordinate(int axis) const {
  return parc::MeshShape(axisSizes).getCoordinate(rank, axis);
}

int64_t MeshInfo::indexInGroup(const std::vector<int> &axes) const {
  return parc::MeshShape(axisSizes).getIndexInGroup(rank, positions(axes));
}

std::vector<int> MeshInfo::group(const std::vector<int> &axes) const {
  std::vector<int64_t> members =
      parc::MeshShape(axisSizes).getGroup(rank, positions(axes));
  return std::vector<int>(members.begin(), members.end());
}

int MeshInfo::peer(int64_t count, const int64_t *axesAndCoordinates) const {
  if (count < 1 || count > static_cast<int64_t>(axisSizes.size()))
    return -1;
  parc::MeshShape shape(axisSizes);
  int64_t peer = rank;
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axesAndCoordinates[2 * i],
            coordinate = axesAndCoordinates[2 * i + 1];
    if (axis < 0 || axis >= static_cast<int64_t>(axisSizes.size()) ||
        coordinate < 0 || coordinate >= axisSizes[axis])
      return -1;
    peer = shape.getRankWithCoordinate(peer, axis, coordinate);
  }
  return static_cast<int>(peer);
}
