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

/// Whether `op`'s kernel may write `result` over `operand`'s buffer
/// (MayWriteOverOperand, the same type).
bool mayWriteOver(Operation *op, Value operand, Value result);

/// Where a tensor lies in a memory plan and when it is live: from the
/// position in the body of the op that writes it (-1: an argument) to that
/// of the last op that reads it (the return's for a tensor that lives to
/// the end: a returned value, an argument whose buffer no next value takes).
struct TensorLifetime {
  Value value;
  int64_t offset, bytes, start, end;
};

/// The lifetimes of `func`'s tensors (of at least one byte) under its
/// memory plan, by start. Fails with a diagnostic at a tensor that has no
/// offset or lies outside the arena.
FailureOr<SmallVector<TensorLifetime>> getTensorLifetimes(func::FuncOp func);

/// Checks `func`'s memory plan: every tensor has an offset inside the arena,
/// no two tensors that are live at once overlap (a result may take the
/// buffer of an operand its op may write over, and an argument's buffer
/// after its last read only as the argument's next value). Emits an error
/// at the first conflict. O(n log n) in the number of tensors.
LogicalResult verifyMemoryPlan(func::FuncOp func);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_MEMORYPLAN_H
