//===- CompileReport.h - what a compiled program needs per rank -*- C++ -*-===//
//
// The figures of a partitioned, memory-planned rank program (arena, model
// state, collectives), read the same way by parc-compile's summary.txt and by
// parc-plan's compile check, and printed beside a plan's predictions so a
// user sees predicted and compiled memory at once.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_COMPILEREPORT_H
#define PARC_PLAN_COMPILEREPORT_H

#include "parc/Plan/Plan.h"
#include "parc/Transforms/CommunicationSummary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::parc {

struct CompiledFigures {
  int64_t ranks = 1;
  /// The static memory plan's peak per rank, and the sum of all tensors.
  int64_t arenaBytes = 0;
  int64_t tensorBytes = 0;
  int64_t parameterBytes = 0;
  /// Gradients held from the backward pass into the optimizer update.
  int64_t gradientBytes = 0;
  int64_t optimizerStateBytes = 0;
  /// Forward values the backward pass reads (over all micro-batches of a
  /// pipeline stage).
  int64_t activationBytes = 0;
  /// PipeDream-2BW's carry state: the stale weight versions, and the
  /// activations a step hands to the next.
  int64_t staleWeightBytes = 0;
  int64_t carriedActivationBytes = 0;
  SmallVector<CollectiveRecord> collectives;

  /// Bytes one rank sends per step.
  double getTrafficBytes() const;
};

/// Reads the figures of `func` after --parc-partition and
/// --parc-plan-memory; fails with a diagnostic on a function without them.
FailureOr<CompiledFigures> measureCompiledProgram(func::FuncOp func);

/// parc-compile's summary: the figures, and beside them what `plan`
/// predicted when it carries predictions.
void printCompileSummary(llvm::raw_ostream &os, const CompiledFigures &figures,
                         const Plan *plan);

} // namespace mlir::parc

#endif // PARC_PLAN_COMPILEREPORT_H
