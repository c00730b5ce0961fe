//===- DimensionFlow.h - which dimensions derive from given ones -*- C++ -*-===//
//
// Follows chosen dimensions of some values (an input's batch dimension, all
// of its token dimensions) through a function body by the ops' sharding
// rules: a result dimension derives from them when one of its factors spans
// one of them. The planner sizes tensors by it; a pipeline finds the batch
// dimension of the activations a plan pins.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_DIMENSIONFLOW_H
#define PARC_IR_DIMENSIONFLOW_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::parc {

struct DimensionFlow {
  /// Per value, whether each dimension derives from the seeds.
  llvm::DenseMap<Value, SmallVector<bool>> dims;
  /// Per op with a sharding rule, whether each factor spans them.
  llvm::DenseMap<Operation *, SmallVector<bool>> factors;

  bool spans(Value value) const {
    auto it = dims.find(value);
    return it != dims.end() && llvm::is_contained(it->second, true);
  }
};

/// Follows `seeds` through `body` in order. An op without a sharding rule
/// whose one result has its one operand's type (dist.constraint) passes the
/// dimensions through.
DimensionFlow
followDimensions(Block &body,
                 ArrayRef<std::pair<Value, SmallVector<bool>>> seeds);

} // namespace mlir::parc

#endif // PARC_IR_DIMENSIONFLOW_H
