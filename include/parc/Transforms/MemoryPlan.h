//===- MemoryPlan.h - where a rank program's tensors live -------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_MEMORYPLAN_H
#define PARC_TRANSFORMS_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::parc {

inline constexpr llvm::StringLiteral kArgOffsetAttrName = "parc.offset";
inline constexpr llvm::StringLiteral kOpOffsetsAttrName = "parc.offsets";
inline constexpr llvm::StringLiteral kArenaBytesAttrName = "parc.arena_bytes";
inline constexpr llvm::StringLiteral kTensorBytesAttrName = "parc.tensor_bytes";

/// Bytes of a tensor of `type` in the arena.
int64_t getTensorBytes(Type type);

/// The arena offset recorded for `value` by the memory plan, or nullopt.
std::optional<int64_t> getArenaOffset(Value value);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_MEMORYPLAN_H
