//===- MeshArithmetic.h - ranks and coordinates of a mesh -------*- C++ -*-===//
//
// The one definition of who holds what on a device mesh, shared by the
// reference evaluator, libparcrt and parc-compile's manifest (a drift would
// make the simulator and the executables disagree). Plain C++: the runtime
// includes it and never links MLIR.
//
// Rank r of a mesh [dp = 2, tp = 4] has coordinates (r / 4, r % 4): the last
// axis is minor. The group over axes A holds the ranks that agree with r on
// every other axis, ordered by their linearized coordinate over A (first
// axis major): the order in which all_gather concatenates and
// reduce_scatter hands out chunks.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_MESHARITHMETIC_H
#define PARC_SUPPORT_MESHARITHMETIC_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace parc {

class MeshShape {
public:
  MeshShape() = default;
  /// `sizes` are positive and their product fits in int64 (the readers of
  /// meshes check both).
  explicit MeshShape(std::vector<int64_t> sizes) : sizes(std::move(sizes)) {}

  const std::vector<int64_t> &getSizes() const { return sizes; }
  size_t getNumAxes() const { return sizes.size(); }

  int64_t getNumRanks() const {
    int64_t count = 1;
    for (int64_t size : sizes)
      count *= size;
    return count;
  }

  int64_t getCoordinate(int64_t rank, size_t axis) const {
    for (size_t i = sizes.size(); i-- > axis + 1;)
      rank /= sizes[i];
    return rank % sizes[axis];
  }

  std::vector<int64_t> getCoordinates(int64_t rank) const {
    std::vector<int64_t> coordinates(sizes.size());
    for (size_t i = sizes.size(); i-- > 0;) {
      coordinates[i] = rank % sizes[i];
      rank /= sizes[i];
    }
    return coordinates;
  }

  int64_t getRank(const std::vector<int64_t> &coordinates) const {
    int64_t rank = 0;
    for (size_t i = 0; i < sizes.size(); ++i)
      rank = rank * sizes[i] + coordinates[i];
    return rank;
  }

  /// The rank that agrees with `rank` on every axis but `axis`, where its
  /// coordinate is `coordinate` (a point-to-point peer).
  int64_t getRankWithCoordinate(int64_t rank, size_t axis,
                                int64_t coordinate) const {
    std::vector<int64_t> coordinates = getCoordinates(rank);
    coordinates[axis] = coordinate;
    return getRank(coordinates);
  }

  int64_t getGroupSize(const std::vector<size_t> &axes) const {
    int64_t size = 1;
    for (size_t axis : axes)
      size *= sizes[axis];
    return size;
  }

  /// `rank`'s position in its group over `axes`.
  int64_t getIndexInGroup(int64_t rank, const std::vector<size_t> &axes) const {
    int64_t index = 0;
    for (size_t axis : axes)
      index = index * sizes[axis] + getCoordinate(rank, axis);
    return index;
  }

  /// The ranks of `rank`'s group over `axes`, in group order.
  std::vector<int64_t> getGroup(int64_t rank,
                                const std::vector<size_t> &axes) const {
    std::vector<int64_t> coordinates = getCoordinates(rank);
    int64_t groupSize = getGroupSize(axes);
    std::vector<int64_t> members;
    members.reserve(groupSize);
    for (int64_t member = 0; member < groupSize; ++member) {
      // Spell `member` in the axes' mixed radix, last axis minor.
      int64_t rest = member;
      for (size_t i = axes.size(); i-- > 0;) {
        coordinates[axes[i]] = rest % sizes[axes[i]];
        rest /= sizes[axes[i]];
      }
      members.push_back(getRank(coordinates));
    }
    return members;
  }

private:
  std::vector<int64_t> sizes;
};

/// The ranks of an MPMD program whose stages run on meshes of different
/// sizes (fewer dedicated parameter servers than workers). Every stage's
/// mesh has the same axes, the stage axis first; stage s runs on the ranks
/// of its mesh at coordinate s of that axis (its slice), and the slices
/// follow each other in stage order, each in its mesh's order. When the
/// meshes are equal this is their own numbering.
class StagedMeshes {
public:
  StagedMeshes() = default;
  /// One mesh per stage; `meshes[s]` has as many coordinates on its first
  /// axis as there are stages.
  explicit StagedMeshes(std::vector<MeshShape> meshes)
      : meshes(std::move(meshes)) {}

  bool empty() const { return meshes.empty(); }
  size_t getNumStages() const { return meshes.size(); }
  const MeshShape &getMesh(size_t stage) const { return meshes[stage]; }

  /// The ranks of stage `stage` (its mesh's slice at that coordinate).
  int64_t getSliceSize(size_t stage) const {
    return meshes[stage].getNumRanks() / meshes[stage].getSizes()[0];
  }

  int64_t getNumRanks() const {
    int64_t count = 0;
    for (size_t stage = 0; stage < meshes.size(); ++stage)
      count += getSliceSize(stage);
    return count;
  }

  /// The stage that world rank `rank` runs.
  size_t getStage(int64_t rank) const {
    size_t stage = 0;
    while (stage + 1 < meshes.size() && rank >= getSliceSize(stage))
      rank -= getSliceSize(stage++);
    return stage;
  }

  /// World rank `rank` as a rank of its stage's mesh.
  int64_t getMeshRank(int64_t rank) const {
    size_t stage = getStage(rank);
    for (size_t before = 0; before < stage; ++before)
      rank -= getSliceSize(before);
    return static_cast<int64_t>(stage) * getSliceSize(stage) + rank;
  }

  /// The world rank of rank `meshRank` of stage `stage`'s mesh, which lies
  /// in that stage's slice.
  int64_t getWorldRank(size_t stage, int64_t meshRank) const {
    int64_t rank = meshRank - static_cast<int64_t>(stage) * getSliceSize(stage);
    for (size_t before = 0; before < stage; ++before)
      rank += getSliceSize(before);
    return rank;
  }

private:
  std::vector<MeshShape> meshes;
};

} // namespace parc

#endif // PARC_SUPPORT_MESHARITHMETIC_H
