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
#include "parc/Transforms/LocalSgd.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::parc {

/// What a memory plan holds at the moment the most bytes are live at once,
/// by the terms of the planner's memory model.
struct PeakComposition {
  /// The body position of the op at which it happens (-1: before the
  /// first op), and the op's name and phase.
  int64_t position = -1;
  std::string op;
  /// Parameters include PipeDream-2BW's stale versions; activations are
  /// forward values the backward pass reads (and carried activations);
  /// gradients are backward values the optimizer update reads; inputs are
  /// the input and label arguments; temporaries are all other values.
  int64_t parameters = 0, optimizerState = 0, inputs = 0, activations = 0,
          gradients = 0, temporaries = 0;

  int64_t getLiveBytes() const {
    return parameters + optimizerState + inputs + activations + gradients +
           temporaries;
  }
};

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
  /// Local SGD's averaging of the replicas, which the launcher runs
  /// between steps.
  std::optional<LocalSgdAveraging> averaging;
  /// The arena's peak less this is space its placement leaves unused.
  PeakComposition peak;

  /// Bytes one rank sends per step, local SGD's averaging spread over the
  /// steps between averagings.
  double getTrafficBytes() const;
};

/// Reads the figures of `func` after --parc-partition and
/// --parc-plan-memory; fails with a diagnostic on a function without them.
FailureOr<CompiledFigures> measureCompiledProgram(func::FuncOp func);

/// The stages a plan's predictions describe: the device stage that needs
/// the most memory and the one that sends the most (dedicated parameter
/// servers are not devices). `figures` are those of `stages`, in order.
struct PredictedStages {
  size_t heaviest = 0, busiest = 0;
};
PredictedStages findPredictedStages(ArrayRef<func::FuncOp> stages,
                                    ArrayRef<CompiledFigures> figures);

/// parc-compile's summary: the figures, and beside the arena and the
/// traffic what `memoryPlan` and `trafficPlan` predicted for them when given
/// and carrying predictions (a plan predicts the rank that needs the most
/// memory and the one that sends the most, which may be on different
/// stages).
void printCompileSummary(llvm::raw_ostream &os, const CompiledFigures &figures,
                         const Plan *memoryPlan, const Plan *trafficPlan);

} // namespace mlir::parc

#endif // PARC_PLAN_COMPILEREPORT_H
