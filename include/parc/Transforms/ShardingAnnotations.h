//===- ShardingAnnotations.h - where shardings live in the IR ---*- C++ -*-===//
//
// Propagation records its result in attributes that partitioning reads:
// `dist.sharding` on function arguments and results, `dist.shardings` (one
// per result) on ops, `dist.mesh` on the function.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_SHARDINGANNOTATIONS_H
#define PARC_TRANSFORMS_SHARDINGANNOTATIONS_H

#include "parc/Transforms/TensorSharding.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::parc {

inline constexpr llvm::StringLiteral kOpShardingsAttrName = "dist.shardings";
inline constexpr llvm::StringLiteral kFuncMeshAttrName = "dist.mesh";

/// The sharding recorded for `value` (an argument or an op result), or
/// nullopt when none is.
std::optional<TensorSharding> getRecordedSharding(Value value);

/// The sharding a function result is required to have: its `dist.sharding`;
/// else, for a result named like an argument, that argument's; else
/// replicated.
TensorSharding getResultSharding(func::FuncOp func, unsigned index);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_SHARDINGANNOTATIONS_H
