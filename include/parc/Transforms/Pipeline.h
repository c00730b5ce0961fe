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

constexpr StringLiteral kPipelineAttrName = "dist.pipeline";
/// The mesh axis ApplyPlan adds for micro-batches (minor to all others).
constexpr StringLiteral kMicrobatchAxis = "microbatch";

/// One step of a stage's schedule: the forward or backward of a micro-batch.
struct ScheduleUnit {
  bool backward;
  int64_t microbatch;
  bool operator==(const ScheduleUnit &other) const {
    return backward == other.backward && microbatch == other.microbatch;
  }
};

/// The units stage `stage` of `stages` runs, in order: GPipe runs every
/// forward then every backward; 1F1B (PipeDream-Flush) runs
/// min(stages - stage - 1, microbatches) forwards, then alternates one
/// forward and one backward, then the remaining backwards. Without a
/// backward (a forward-only model) both are every forward in order.
SmallVector<ScheduleUnit> getStageSchedule(PipelineSchedule schedule,
                                           int64_t stage, int64_t stages,
                                           int64_t microbatches,
                                           bool hasBackward);

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

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_PIPELINE_H
