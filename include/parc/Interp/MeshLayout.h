//===- MeshLayout.h - ranks and coordinates of a mesh -----------*- C++ -*-===//
//
// Rank r of a mesh [dp = 2, tp = 4] has coordinates (r / 4, r % 4): the
// last axis is minor. The group of a collective over axes A holds the ranks
// that agree with r on every other axis, ordered by their linearized
// coordinate over A (first axis major) — the order in which all_gather
// concatenates and reduce_scatter hands out chunks.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_MESHLAYOUT_H
#define PARC_INTERP_MESHLAYOUT_H

#include "dist/IR/DistOps.h"

namespace mlir::parc::interp {

class MeshLayout {
public:
  explicit MeshLayout(dist::MeshOp mesh);

  int64_t getNumRanks() const { return numRanks; }
  int64_t getCoordinate(int64_t rank, StringRef axis) const;
  /// The ranks of `rank`'s group over `axes`, in group order.
  SmallVector<int64_t> getGroup(int64_t rank, ArrayRef<StringRef> axes) const;
  /// `rank`'s position in its group over `axes`.
  int64_t getIndexInGroup(int64_t rank, ArrayRef<StringRef> axes) const;
  int64_t getGroupSize(ArrayRef<StringRef> axes) const;
  ArrayRef<std::string> getAxisNames() const { return names; }

private:
  unsigned axisPosition(StringRef axis) const;

  SmallVector<std::string> names;
  SmallVector<int64_t> sizes;
  int64_t numRanks = 1;
};

/// The names in an array of string attributes (the axes of a collective or
/// of a sharding dimension).
SmallVector<StringRef> axisNames(ArrayAttr axes);

} // namespace mlir::parc::interp

#endif // PARC_INTERP_MESHLAYOUT_H
