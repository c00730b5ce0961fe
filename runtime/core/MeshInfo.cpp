//===- MeshInfo.cpp - ranks and coordinates of the mesh -------------------===//
//
// The project's one mesh arithmetic (parc/Support/MeshArithmetic.h), which
// the reference evaluator and parc-compile's manifest use too.
//
//===----------------------------------------------------------------------===//

#include "parcrt/Backend.h"

#include "parc/Support/MeshArithmetic.h"

#include <algorithm>

using namespace parcrt;

static std::vector<size_t> positions(const std::vector<int> &axes) {
  return std::vector<size_t>(axes.begin(), axes.end());
}

int64_t MeshInfo::meshRank() const {
  return stages.empty() ? rank : stages.getMeshRank(rank);
}

/// A rank of this rank's stage's mesh as a world rank.
static int worldRank(const MeshInfo &mesh, int64_t meshRank) {
  return static_cast<int>(mesh.stages.empty()
                              ? meshRank
                              : mesh.stages.getWorldRank(mesh.stage, meshRank));
}

int64_t MeshInfo::numRanks() const {
  return parc::MeshShape(axisSizes).getNumRanks();
}

int64_t MeshInfo::coordinate(int axis) const {
  return parc::MeshShape(axisSizes).getCoordinate(meshRank(), axis);
}

int64_t MeshInfo::indexInGroup(const std::vector<int> &axes) const {
  return parc::MeshShape(axisSizes).getIndexInGroup(meshRank(),
                                                    positions(axes));
}

std::vector<int> MeshInfo::group(const std::vector<int> &axes) const {
  std::vector<int> members;
  bool acrossStages =
      !stages.empty() && std::find(axes.begin(), axes.end(), 0) != axes.end();
  if (!acrossStages) {
    for (int64_t member :
         parc::MeshShape(axisSizes).getGroup(meshRank(), positions(axes)))
      members.push_back(worldRank(*this, member));
    return members;
  }
  // Over the stage axis (the watchdog's set-up spans every rank): each
  // stage's members in its own mesh, where this rank's coordinates on the
  // other axes are in it.
  std::vector<size_t> within;
  for (int axis : axes)
    if (axis != 0)
      within.push_back(static_cast<size_t>(axis));
  std::vector<int64_t> coordinates =
      parc::MeshShape(axisSizes).getCoordinates(meshRank());
  for (size_t stage = 0; stage < stages.getNumStages(); ++stage) {
    const parc::MeshShape &mesh = stages.getMesh(stage);
    coordinates[0] = static_cast<int64_t>(stage);
    bool inMesh = true;
    for (size_t axis = 0; axis < coordinates.size(); ++axis)
      inMesh &= std::find(within.begin(), within.end(), axis) != within.end() ||
                coordinates[axis] < mesh.getSizes()[axis];
    if (!inMesh)
      continue;
    std::vector<int64_t> inside = coordinates;
    for (size_t axis : within)
      inside[axis] = 0;
    for (int64_t member : mesh.getGroup(mesh.getRank(inside), within))
      members.push_back(static_cast<int>(stages.getWorldRank(stage, member)));
  }
  return members;
}

int MeshInfo::peer(int64_t count, const int64_t *axesAndCoordinates) const {
  if (count < 1 || count > static_cast<int64_t>(axisSizes.size()))
    return -1;
  std::vector<int64_t> coordinates =
      parc::MeshShape(axisSizes).getCoordinates(meshRank());
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = axesAndCoordinates[2 * i];
    if (axis < 0 || axis >= static_cast<int64_t>(axisSizes.size()))
      return -1;
    coordinates[axis] = axesAndCoordinates[2 * i + 1];
  }
  // A peer on another stage lies in that stage's mesh (the stage axis is
  // the first when the meshes differ).
  size_t peerStage = stages.empty() ? 0 : static_cast<size_t>(coordinates[0]);
  if (!stages.empty() &&
      (coordinates[0] < 0 ||
       coordinates[0] >= static_cast<int64_t>(stages.getNumStages())))
    return -1;
  const parc::MeshShape peerMesh =
      stages.empty() ? parc::MeshShape(axisSizes) : stages.getMesh(peerStage);
  for (size_t axis = 0; axis < coordinates.size(); ++axis)
    if (coordinates[axis] < 0 || coordinates[axis] >= peerMesh.getSizes()[axis])
      return -1;
  int64_t peerRank = peerMesh.getRank(coordinates);
  return static_cast<int>(
      stages.empty() ? peerRank : stages.getWorldRank(peerStage, peerRank));
}
