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

  int64_t getNumRanks() const { return shape.getNumRanks(); }
  int64_t getCoordinate(int64_t rank, StringRef axis) const;
  /// The rank that agrees with `rank` on every axis but `axis`, where its
  /// coordinate is `coordinate`.
  int64_t getRankWithCoordinate(int64_t rank, StringRef axis,
                                int64_t coordinate) const;
  /// The ranks of `rank`'s group over `axes`, in group order.
  SmallVector<int64_t> getGroup(int64_t rank, ArrayRef<StringRef> axes) const;
  /// `rank`'s position in its group over `axes`.
  int64_t getIndexInGroup(int64_t rank, ArrayRef<StringRef> axes) const;
  int64_t getGroupSize(ArrayRef<StringRef> axes) const;
  ArrayRef<std::string> getAxisNames() const { return names; }

private:
  size_t axisPosition(StringRef axis) const;
  std::vector<size_t> axisPositions(ArrayRef<StringRef> axes) const;

  SmallVector<std::string> names;
  ::parc::MeshShape shape;
};

/// The names in an array of string attributes (the axes of a collective or
/// of a sharding dimension).
SmallVector<StringRef> axisNames(ArrayAttr axes);

} // namespace mlir::parc::interp

#endif // PARC_INTERP_MESHLAYOUT_H
