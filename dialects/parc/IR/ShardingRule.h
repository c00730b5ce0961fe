//===- ShardingRule.h - factor-based sharding rules -------------*- C++ -*-===//
//
// A sharding rule names the independent index spaces (factors) of an op and
// says which tensor dimensions each factor spans. Propagation and
// partitioning reason only about factors, never about the op itself.
//
// Worked example: %y = parc.matmul %x, %w : [8, 16] x [16, 32] -> [8, 32]
//
//   factors: f0 = m (8, parallel), f1 = n (32, parallel), f2 = k (16, reduction)
//   x: [[f0], [f2]]   w: [[f2], [f1]]   y: [[f0], [f1]]
//
// Sharding w as [[], [tp]] shards f1 over tp, so y becomes [[], [tp]] and x
// stays whole. Sharding x as [[], [tp]] shards f2: w must be [[tp], []] and y
// is a partial sum over tp, which an all_reduce (or reduce_scatter) settles.
//
// A reshape [b, s, 3h] -> [b, s, 3, H, d] maps the input's last dimension to
// three factors [f2, f3, f4] (major to minor): mesh axes split a compound
// dimension from its major factor on, so `tp` can shard it only where it
// divides the size of f2.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_SHARDINGRULE_H
#define PARC_IR_SHARDINGRULE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

namespace mlir::parc {

enum class FactorKind {
  /// Sharding it splits every tensor that spans it; no communication but
  /// what the op's local rewrite adds where the factor needs one.
  Parallel,
  /// The op sums over it: sharded, the results that do not span it are
  /// partial sums over its mesh axes.
  Reduction,
  /// The op needs it whole (the softmax axis, the normalized axis).
  Replicated,
};

struct Factor {
  int64_t size;
  FactorKind kind;
  /// Sharded, the op's local form differs from the op itself (a masked
  /// embedding lookup, the vocab-parallel loss): partitioning asks the op's
  /// LocalPartitionOpInterface for it.
  bool needsLocalRewrite = false;
};

/// The factors of one tensor dimension, major to minor; empty for a
/// dimension of size 1 that broadcasts.
using DimFactors = llvm::SmallVector<int64_t, 2>;
using TensorFactors = llvm::SmallVector<DimFactors>;

class ShardingRule {
public:
  ArrayRef<Factor> getFactors() const { return factors; }
  ArrayRef<TensorFactors> getOperands() const { return operands; }
  ArrayRef<TensorFactors> getResults() const { return results; }

  /// Operands then results, in that order.
  SmallVector<const TensorFactors *> getTensors() const;

  int64_t addFactor(int64_t size, FactorKind kind,
                    bool needsLocalRewrite = false);
  void setKind(int64_t factor, FactorKind kind) { factors[factor].kind = kind; }
  void addOperand(TensorFactors dims) { operands.push_back(std::move(dims)); }
  void addResult(TensorFactors dims) { results.push_back(std::move(dims)); }

  /// Prints `([i, j], [j, k]) -> ([i, k]) {i=8, j=16 reduction, k=32}`.
  void print(llvm::raw_ostream &os) const;

private:
  SmallVector<Factor> factors;
  SmallVector<TensorFactors> operands;
  SmallVector<TensorFactors> results;
};

/// Builds the common rules.
class ShardingRuleBuilder {
public:
  /// One parallel factor per dimension of `shape`.
  explicit ShardingRuleBuilder(ArrayRef<int64_t> shape);
  ShardingRuleBuilder() = default;

  /// An operand or result whose dimensions align with the last dimensions of
  /// the factor shape (numpy broadcasting): size-1 dimensions that broadcast
  /// span no factor.
  ShardingRuleBuilder &addBroadcastTensor(ArrayRef<int64_t> shape,
                                          bool isResult);
  /// Marks the factor of broadcast dimension `dim` as `kind`.
  ShardingRuleBuilder &setKind(int64_t dim, FactorKind kind);

  ShardingRule build() { return std::move(rule); }
  ShardingRule &getRule() { return rule; }

private:
  ShardingRule rule;
  SmallVector<int64_t> shape;
  SmallVector<int64_t> shapeFactors;
};

} // namespace mlir::parc

#endif // PARC_IR_SHARDINGRULE_H
