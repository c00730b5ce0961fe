//===- Evaluator.h - the reference evaluator --------------------*- C++ -*-===//
//
// Executes a function of parc ops op by op on the CPU. It is the numerical
// oracle of every transformation, so it is simple rather than fast.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_EVALUATOR_H
#define PARC_INTERP_EVALUATOR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "parc/Interp/MeshLayout.h"
#include "parc/Interp/Tensor.h"

namespace mlir::parc::interp {

/// The precision every op result is rounded to. Kernels compute in double;
/// in Stored mode each floating-point argument and result is rounded to its
/// element type (f32, bf16, f16; to nearest even), which is what a kernel
/// with exact intermediate sums would store; in F64 mode nothing is rounded.
enum class Precision { Stored, F64 };

/// Evaluates `func` on `arguments` (one per function argument, shaped as its
/// type). Returns one tensor per function result, or failure after a
/// diagnostic on the offending op.
FailureOr<SmallVector<Tensor>> evaluateFunction(func::FuncOp func,
                                                ArrayRef<Tensor> arguments,
                                                Precision precision);

/// Evaluates a partitioned function on every rank of `mesh` with exact
/// collectives. `rankArguments[r]` are rank r's local arguments; returns
/// each rank's local results.
FailureOr<SmallVector<SmallVector<Tensor>>>
evaluateOnMesh(func::FuncOp func, const MeshLayout &mesh,
               ArrayRef<SmallVector<Tensor>> rankArguments,
               Precision precision);

/// Evaluates `rankFunctions[r]` on rank r of `mesh` (pipeline stages run
/// different functions): ranks meet at collectives over their groups and
/// exchange point-to-point messages through channels, a receive waiting for
/// its message as the compiled programs do. Fails on a deadlock with a
/// diagnostic naming where every rank waits.
FailureOr<SmallVector<SmallVector<Tensor>>>
evaluateRanks(ArrayRef<func::FuncOp> rankFunctions, const MeshLayout &mesh,
              ArrayRef<SmallVector<Tensor>> rankArguments,
              Precision precision);

} // namespace mlir::parc::interp

#endif // PARC_INTERP_EVALUATOR_H
