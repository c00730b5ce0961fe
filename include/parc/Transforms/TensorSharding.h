//===- TensorSharding.h - a tensor's layout over a mesh ---------*- C++ -*-===//
//
// The value form of #dist.sharding used while propagating and partitioning:
// per dimension the mesh axes that split it (major to minor) and the axes
// over which the tensor is a pending sum.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_TENSORSHARDING_H
#define PARC_TRANSFORMS_TENSORSHARDING_H

#include "dist/IR/DistOps.h"

namespace mlir::parc {

using AxisList = SmallVector<StringAttr, 2>;

struct TensorSharding {
  SmallVector<AxisList> dims;
  AxisList partial;

  static TensorSharding replicated(unsigned rank);
  static TensorSharding fromAttr(dist::ShardingAttr attr);
  dist::ShardingAttr toAttr(MLIRContext *context,
                            FlatSymbolRefAttr mesh) const;

  bool operator==(const TensorSharding &other) const {
    return dims == other.dims && partial == other.partial;
  }
  bool operator!=(const TensorSharding &other) const {
    return !(*this == other);
  }

  bool usesAxis(StringAttr axis) const;
  bool isReplicated() const;
  /// Whether reaching `wanted` from this layout undoes a split: a gather,
  /// or a move of an axis to another dimension, which makes a new buffer.
  bool dropsSplitFor(const TensorSharding &wanted) const;

  /// The per-rank shape of a tensor of `globalShape`.
  SmallVector<int64_t> getLocalShape(ArrayRef<int64_t> globalShape,
                                     dist::MeshOp mesh) const;
  RankedTensorType getLocalType(RankedTensorType globalType,
                                dist::MeshOp mesh) const;
  /// The shape of the global tensor whose per-rank parts have `localShape`.
  SmallVector<int64_t> getGlobalShape(ArrayRef<int64_t> localShape,
                                      dist::MeshOp mesh) const;
};

llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                              const TensorSharding &sharding);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_TENSORSHARDING_H
