//===- Resharding.h - collectives between two layouts -----------*- C++ -*-===//
//
// Turning one layout of a tensor into another is decided once, by
// planResharding, as a list of collective steps with the bytes each moves.
// The partitioner builds the steps as IR (reshard); the planner's cost model
// prices the same steps without building anything, so the two never disagree
// about what a layout change costs.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_RESHARDING_H
#define PARC_TRANSFORMS_RESHARDING_H

#include "parc/Transforms/TensorSharding.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::parc {

/// One collective of a resharding.
struct ReshardStep {
  dist::CollectiveKind kind;
  /// The mesh axes whose ranks take part.
  AxisList axes;
  /// The dimension the collective splits or gathers (for all_to_all, the
  /// dimension that becomes split).
  int64_t dim = 0;
  /// all_to_all: the dimension that was split and becomes whole.
  int64_t sourceDim = 0;
  /// The layout after the step.
  TensorSharding after;
  /// CommunicationOpInterface's buffer bytes of the collective on one rank.
  int64_t bufferBytes = 0;
  /// Ranks in the group (the product of the axes' sizes).
  int64_t groupSize = 1;

  /// Bytes one rank sends (ring algorithm).
  double getTrafficBytes() const {
    return dist::getRingTrafficBytes(kind, bufferBytes, groupSize);
  }
};

/// The collectives that turn the local part of a tensor of `globalType` laid
/// out as `from` into its local part laid out as `to`, in order:
///
///   partial [a] -> [[a], ..]     reduce_scatter (the sum lands split)
///   partial [a] -> [[], ..]      all_reduce
///   [[a], []] -> [[], [a]]       all_to_all (a split moves between dims)
///   [[a, b]] -> [[a]]            all_gather of the trailing axes
///   [[a]] -> [[a, b]]            all_slice of the extra axes (no traffic)
///
/// Fails, with the reason in `whyNot`, only when `to` asks for a pending sum
/// that `from` does not have.
FailureOr<SmallVector<ReshardStep>>
planResharding(dist::MeshOp mesh, RankedTensorType globalType,
               TensorSharding from, const TensorSharding &to,
               std::string &whyNot);

/// Emits the collectives of planResharding for `value`, the local part laid
/// out as `from`; a failure is reported at `loc`.
FailureOr<Value> reshard(OpBuilder &builder, Location loc, dist::MeshOp mesh,
                         Value value, RankedTensorType globalType,
                         TensorSharding from, const TensorSharding &to);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_RESHARDING_H
