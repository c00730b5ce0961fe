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

int64_t mlir::parc::getMaxInFlight(ArrayRef<ScheduleUnit> units) {
  int64_t inFlight = 0, most = 0;
  for (const ScheduleUnit &unit : units) {
    inFlight += unit.backward ? -1 : 1;
    most = std::max(most, inFlight);
  }
  return most;
}

llvm::Expected<SmallVector<int64_t>>
mlir::parc::getLayersPerStage(int64_t stages, int64_t numLayers,
                              const std::optional<SmallVector<int64_t>> &given) {
  if (given && numLayers == 0)
    return llvm::createStringError(
        "\"layers_per_stage\" is given, but the model has no layers "
        "(parameters named like 'h.<i>.…') to split");
  if (given) {
    int64_t total = 0;
    for (int64_t count : *given)
      total += count;
    if (int64_t(given->size()) != stages || total != numLayers)
      return llvm::createStringError(
          "\"layers_per_stage\" lists " + std::to_string(given->size()) +
          " stages with " + std::to_string(total) +
          " layers; the pipeline has " + std::to_string(stages) +
          " stages and the model " + std::to_string(numLayers) + " layers");
    return *given;
  }
  // No layers: the stages split the forward ops by cost instead.
  if (numLayers == 0)
    return SmallVector<int64_t>();
  if (stages > numLayers)
    return llvm::createStringError(
        "the pipeline has " + std::to_string(stages) +
        " stages but the model only " + std::to_string(numLayers) +
        " layers (parameters named like 'h.<i>.…'); each stage needs at "
        "least one");
  SmallVector<int64_t> perStage(stages, numLayers / stages);
  int64_t extra = numLayers % stages;
  for (int64_t s = 1; s < stages && extra > 0; ++s, --extra)
    ++perStage[s];
  if (extra > 0)
    ++perStage[0];
  return perStage;
}
