//===- PipelineSchedule.cpp - the order of a stage's units ----------------===//

#include "parc/Transforms/Pipeline.h"

using namespace mlir;
using namespace mlir::parc;

SmallVector<ScheduleUnit>
mlir::parc::getStageSchedule(PipelineSchedule schedule, int64_t stage,
                             int64_t stages, int64_t microbatches,
                             bool hasBackward) {
  SmallVector<ScheduleUnit> units;
  auto forward = [&](int64_t j) { units.push_back({false, j}); };
  auto backward = [&](int64_t j) { units.push_back({true, j}); };
  if (!hasBackward) {
    for (int64_t j = 0; j < microbatches; ++j)
      forward(j);
    return units;
  }
  // GPipe: warm up with every micro-batch. 1F1B: with as many as there are
  // stages after this one, so the last stage alternates from the start.
  int64_t warmup = schedule == PipelineSchedule::GPipe
                       ? microbatches
                       : std::min(stages - stage - 1, microbatches);
  for (int64_t j = 0; j < warmup; ++j)
    forward(j);
  for (int64_t j = 0; j < microbatches - warmup; ++j) {
    forward(warmup + j);
    backward(j);
  }
  for (int64_t j = microbatches - warmup; j < microbatches; ++j)
    backward(j);
  return units;
}
