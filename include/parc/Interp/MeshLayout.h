//===- MeshLayout.h - ranks and coordinates of a mesh -----------*- C++ -*-===//
//
// A dist.mesh's axis names over the one mesh arithmetic of the project
// (parc/Support/MeshArithmetic.h, shared with libparcrt): rank r of a mesh
// [dp = 2, tp = 4] has coordinates (r / 4, r % 4), and a group over axes A
// is ordered by the linearized coordinate over A, first axis major.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_MESHLAYOUT_H
#define PARC_INTERP_MESHLAYOUT_H

#include "dist/IR/DistOps.h"
#include "parc/Support/MeshArithmetic.h"

namespace mlir::parc::interp {

class MeshLayout {
public:
  explicit MeshLayout(dist::MeshOp mesh);
  /// Stages on meshes of their own (fewer dedicated parameter servers than
  /// workers, parc::StagedMeshes): rank r is then a world rank, which runs
  /// its stage's slice of that stage's mesh; every query below answers in
  /// the rank's own stage's mesh.
  explicit MeshLayout(ArrayRef<dist::MeshOp> stageMeshes);

  int64_t getNumRanks() const;
  int64_t getCoordinate(int64_t rank, StringRef axis) const;
  /// The rank whose coordinates on `axes` are `coordinates` and on the
  /// other axes `rank`'s (a point-to-point peer, on another stage's mesh
  /// when the stage axis is among `axes`); -1 when that mesh has none.
  int64_t getPeerRank(int64_t rank, ArrayRef<StringRef> axes,
                      ArrayRef<int64_t> coordinates) const;
  int64_t getRankWithCoordinate(int64_t rank, StringRef axis,
                                int64_t coordinate) const {
    return getPeerRank(rank, {axis}, {coordinate});
  }
  /// The ranks of `rank`'s group over `axes`, in group order.
  SmallVector<int64_t> getGroup(int64_t rank, ArrayRef<StringRef> axes) const;
  /// `rank`'s position in its group over `axes`.
  int64_t getIndexInGroup(int64_t rank, ArrayRef<StringRef> axes) const;
  int64_t getGroupSize(int64_t rank, ArrayRef<StringRef> axes) const;
  ArrayRef<std::string> getAxisNames() const { return names; }
  /// The world rank of rank `meshRank` of stage `stage`'s mesh (in that
  /// stage's slice); `meshRank` itself on one mesh.
  int64_t getWorldRank(size_t stage, int64_t meshRank) const {
    return stages.empty() ? meshRank : stages.getWorldRank(stage, meshRank);
  }

private:
  size_t axisPosition(StringRef axis) const;
  std::vector<size_t> axisPositions(ArrayRef<StringRef> axes) const;
  /// The mesh of `rank`'s stage, and `rank` in its numbering.
  const ::parc::MeshShape &getShape(int64_t rank) const;
  int64_t getMeshRank(int64_t rank) const;

  SmallVector<std::string> names;
  ::parc::MeshShape shape;
  ::parc::StagedMeshes stages;
};

/// The names in an array of string attributes (the axes of a collective or
/// of a sharding dimension).
SmallVector<StringRef> axisNames(ArrayAttr axes);

} // namespace mlir::parc::interp

#endif // PARC_INTERP_MESHLAYOUT_H
