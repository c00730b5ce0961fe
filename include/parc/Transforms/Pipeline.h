//===- Pipeline.h - pipeline stages and their schedules ---------*- C++ -*-===//
//
// A pipelined plan's function carries `dist.pipeline` (ApplyPlan sets it):
// the stage axis, the micro-batch axis ApplyPlan added to the mesh, the
// micro-batch count, the schedule and optionally the layers of each stage.
// --parc-pipeline-partition turns the partitioned program of one
// micro-batch into one function per stage (`dist.stage`), each a static
// sequence of forward and backward units in the schedule's order.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_PIPELINE_H
#define PARC_TRANSFORMS_PIPELINE_H

#include "parc/IR/ModelConvention.h"
#include "parc/Plan/Plan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::parc {

/// The mesh axis ApplyPlan adds for micro-batches (minor to all others).
constexpr StringLiteral kMicrobatchAxis = "microbatch";
/// How --parc-pipeline-partition refuses a model whose forward pass reads a
/// value summed over the whole batch (the planner recognizes it).
constexpr StringLiteral kWholeBatchValueError =
    "needs a value summed over all micro-batches while micro-batches still "
    "run (such as batch statistics); the model cannot be pipelined";

/// One step of a stage's schedule: the forward or backward of a micro-batch
/// through one model chunk. Chunk c runs on stage c mod stages; without
/// interleaving chunk and stage are the same.
struct ScheduleUnit {
  /// A backward is the input gradients and the weight gradients together;
  /// zero-bubble schedules run the two apart.
  enum Kind { Forward, Backward, InputGradient, WeightGradient };
  Kind kind;
  int64_t microbatch;
  int64_t chunk;
  /// The train step whose micro-batch this is, relative to the one the
  /// unit's step function runs: PipeDream-2BW's stages run the first
  /// forwards of the next step's micro-batches (+1) in place of the
  /// cooldown, and so start a step with forwards that ran in the previous
  /// one (-1). Synchronous schedules have 0 only.
  int64_t step = 0;
};

/// The units stage `stage` of `stages` runs, in order. GPipe runs every
/// forward then every backward; 1F1B (PipeDream-Flush) runs
/// min(stages - stage - 1, microbatches) forwards, then alternates one
/// forward and one backward, then the remaining backwards. Interleaved 1F1B
/// (Megatron-LM's, `virtualStages` chunks per stage, micro-batches a
/// multiple of the stages) goes through the chunks in groups of `stages`
/// micro-batches, warms up with 2 (stages - stage - 1) + (virtualStages -
/// 1) stages forwards and alternates after that. ZB-H1 (Qi et al., ICLR'24)
/// is 1F1B whose first `stage` backwards compute only input gradients:
/// their weight gradients run at the end, in 1F1B's cooldown bubble, with
/// 1F1B's memory. PipeDream-2BW (Narayanan et al., ICML'21) is 1F1B without
/// the flush: the warm-up forwards of stage s (min(stages - s - 1,
/// microbatches) of them) ran in the previous step (step -1), and the
/// cooldown alternates the next step's warm-up forwards (step +1) with the
/// last backwards. Without a backward (a forward-only model) every
/// schedule runs the forwards in order.
SmallVector<ScheduleUnit> getStageSchedule(PipelineSchedule schedule,
                                           int64_t stage, int64_t stages,
                                           int64_t microbatches,
                                           int64_t virtualStages,
                                           bool hasBackward);

/// The units of a stage function that --parc-pipeline-partition built, from
/// its `dist.stage` and `dist.pipeline`.
SmallVector<ScheduleUnit> getStageSchedule(func::FuncOp stageFunc);

/// The most micro-batches whose forward has run and backward has not, at
/// any point of `units`: how many micro-batches' activations a stage holds.
int64_t getMaxInFlight(ArrayRef<ScheduleUnit> units);

/// The layers of each of `stages` stages for a model of `numLayers` layers:
/// `given` when it fits, else an even split (the middle stages take the
/// extra layers first: the first and last also hold the embedding and the
/// head); empty for a model without layers, whose forward ops the stages
/// split by FLOPs. An error message when `given` does not fit or there are
/// more stages than layers.
llvm::Expected<SmallVector<int64_t>>
getLayersPerStage(int64_t stages, int64_t numLayers,
                  const std::optional<SmallVector<int64_t>> &given);

/// The layers of each of `stages` stages that balance their costs:
/// contiguous ranges of at least one layer (`layerCosts` has one cost per
/// layer, at least `stages`), the costliest stage as cheap as it can be,
/// the first stage also carrying `firstExtra` (the embedding) and the last
/// `lastExtra` (the head and the loss), as Megatron-LM's uneven first and
/// last stages do. The even split of getLayersPerStage when it is as good.
SmallVector<int64_t> balanceLayersPerStage(ArrayRef<double> layerCosts,
                                           double firstExtra, double lastExtra,
                                           int64_t stages);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_PIPELINE_H
