//===- FactorSharding.h - between tensor and factor shardings ---*- C++ -*-===//
//
// Propagation and partitioning move between two views of an op: the
// sharding of each operand and result, and the mesh axes of each factor of
// the op's ShardingRule.
//
// Example, parc.matmul [8, 16] x [16, 32] on a mesh [tp = 4] with factors
// m = 8, n = 32, k = 16 (reduction):
//   project  w: [[], [tp]]            -> factor axes {m: [], n: [tp], k: []}
//   derive   x from {n: [tp]}         -> [[], []]
//   derive   y from {n: [tp]}         -> [[], [tp]]
//   derive   y from {k: [tp]}         -> [[], []] partial [tp]
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_FACTORSHARDING_H
#define PARC_TRANSFORMS_FACTORSHARDING_H

#include "parc/IR/ShardingRule.h"
#include "parc/Transforms/TensorSharding.h"

namespace mlir::parc {

/// Mesh axes per factor of a rule, major to minor.
using FactorAxes = SmallVector<AxisList>;

/// The factor axes that `sharding` of a tensor spanning `tensor` implies.
/// Axes that cannot be placed on the dimension's factors (a split that is
/// not contiguous, or that does not divide the factor) are dropped.
FactorAxes projectOntoFactors(const ShardingRule &rule,
                              const TensorFactors &tensor,
                              const TensorSharding &sharding,
                              dist::MeshOp mesh);

/// What one tensor's sharding says about one factor of the op.
struct FactorClaim {
  int64_t factor;
  /// The tensor's index among the rule's operands then results.
  unsigned tensor;
  AxisList axes;
};

/// Projects the sharding of every tensor of `rule` that has one (operands
/// then results, null where unknown) onto the factors each spans: one claim
/// per (tensor, factor it spans), in tensor order. Propagation and
/// partitioning both resolve an op's factors from these claims, with their
/// own policies (priority and bytes; recorded results first).
SmallVector<FactorClaim>
collectFactorClaims(const ShardingRule &rule,
                    ArrayRef<const TensorSharding *> shardings,
                    dist::MeshOp mesh);

/// The dimension shardings of a tensor spanning `tensor` under `factors`;
/// when `isResult`, `partial` lists the axes of the sharded reduction
/// factors the tensor does not span.
TensorSharding deriveTensorSharding(const ShardingRule &rule,
                                    const TensorFactors &tensor,
                                    const FactorAxes &factors, bool isResult);

/// Makes `factors` realizable: no axis on a replicated factor, each axis on
/// one factor only (earlier factors keep theirs), axis products dividing
/// factor sizes, and compound dimensions split contiguously (a minor factor
/// is split only once the major ones are fully split).
void legalizeFactorAxes(const ShardingRule &rule, FactorAxes &factors,
                        dist::MeshOp mesh);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_FACTORSHARDING_H
