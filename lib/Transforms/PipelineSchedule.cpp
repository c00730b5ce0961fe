//===- PipelineSchedule.cpp - the order of a stage's units ----------------===//

#include "parc/Transforms/Pipeline.h"

#include "dist/IR/DistOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::parc;

SmallVector<ScheduleUnit>
mlir::parc::getStageSchedule(PipelineSchedule schedule, int64_t stage,
                             int64_t stages, int64_t microbatches,
                             int64_t virtualStages, bool hasBackward) {
  // The k-th forward (backward) unit of this stage: micro-batches go
  // through the chunks in groups of `stages` (backwards through the chunks
  // in reverse), as Megatron-LM's interleaved schedule does; with one chunk
  // per stage this is micro-batch k.
  int64_t group = stages * virtualStages;
  auto unit = [&](int64_t k, bool backward) {
    int64_t local = (k % group) / stages;
    if (backward)
      local = virtualStages - 1 - local;
    int64_t microbatch =
        virtualStages == 1 ? k : (k / group) * stages + k % stages;
    return ScheduleUnit{backward ? ScheduleUnit::Backward
                                 : ScheduleUnit::Forward,
                        microbatch, local * stages + stage};
  };
  int64_t total = microbatches * virtualStages;
  SmallVector<ScheduleUnit> units;
  if (!hasBackward) {
    for (int64_t k = 0; k < total; ++k)
      units.push_back(unit(k, false));
    return units;
  }
  if (schedule == PipelineSchedule::PipeDream2BW) {
    int64_t warmup = std::min(stages - stage - 1, microbatches);
    for (int64_t k = 0; k < warmup; ++k)
      units.push_back({ScheduleUnit::Forward, k, stage, /*step=*/-1});
    for (int64_t j = 0; j < microbatches - warmup; ++j) {
      units.push_back({ScheduleUnit::Forward, warmup + j, stage});
      units.push_back({ScheduleUnit::Backward, j, stage});
    }
    for (int64_t k = 0; k < warmup; ++k) {
      units.push_back({ScheduleUnit::Forward, k, stage, /*step=*/1});
      units.push_back(
          {ScheduleUnit::Backward, microbatches - warmup + k, stage});
    }
    return units;
  }
  // GPipe warms up with every unit; 1F1B with as many micro-batches as
  // there are stages after this one, so the last stage alternates from the
  // start; interleaving adds the other chunks of the first group.
  int64_t warmup = schedule == PipelineSchedule::GPipe ? total
                   : virtualStages == 1
                       ? stages - stage - 1
                       : 2 * (stages - stage - 1) + (virtualStages - 1) * stages;
  warmup = std::min(warmup, total);
  for (int64_t k = 0; k < warmup; ++k)
    units.push_back(unit(k, false));
  for (int64_t k = 0; k < total - warmup; ++k) {
    units.push_back(unit(warmup + k, false));
    units.push_back(unit(k, true));
  }
  for (int64_t k = total - warmup; k < total; ++k)
    units.push_back(unit(k, true));
  if (schedule != PipelineSchedule::ZeroBubbleH1)
    return units;
  // ZB-H1: the first `stage` backwards (this stage's share of 1F1B's
  // cooldown bubble) defer their weight gradients to the end.
  SmallVector<ScheduleUnit> split;
  SmallVector<ScheduleUnit> deferred;
  for (ScheduleUnit each : units) {
    if (each.kind == ScheduleUnit::Backward &&
        int64_t(deferred.size()) < std::min(stage, microbatches)) {
      split.push_back({ScheduleUnit::InputGradient, each.microbatch,
                       each.chunk});
      deferred.push_back({ScheduleUnit::WeightGradient, each.microbatch,
                          each.chunk});
      continue;
    }
    split.push_back(each);
  }
  llvm::append_range(split, deferred);
  return split;
}

SmallVector<ScheduleUnit> mlir::parc::getStageSchedule(func::FuncOp stageFunc) {
  auto pipeline = stageFunc->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  auto stage = stageFunc->getAttrOfType<IntegerAttr>(kStageAttrName);
  auto meshName = stageFunc->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
  dist::MeshOp mesh =
      meshName ? dist::lookupMesh(stageFunc, meshName) : dist::MeshOp();
  if (!pipeline || !stage || !mesh)
    return {};
  auto axis = pipeline.getAs<StringAttr>("axis");
  auto schedule = pipeline.getAs<StringAttr>("schedule");
  auto microbatches = pipeline.getAs<IntegerAttr>("microbatches");
  auto virtualStages = pipeline.getAs<IntegerAttr>("virtual_stages");
  std::optional<int64_t> stages =
      axis ? mesh.getAxisSize(axis.getValue()) : std::nullopt;
  if (!schedule || !microbatches || !stages)
    return {};
  bool hasBackward = false;
  stageFunc.walk([&](Operation *op) {
    hasBackward |= op->hasAttr(kPhaseAttrName) && getPhase(op) != Phase::Forward;
  });
  return getStageSchedule(parsePipelineScheduleName(schedule.getValue())
                              .value_or(PipelineSchedule::OneFOneB),
                          stage.getInt(), *stages, microbatches.getInt(),
                          virtualStages ? virtualStages.getInt() : 1,
                          hasBackward);
}

int64_t mlir::parc::getMaxInFlight(ArrayRef<ScheduleUnit> units) {
  int64_t inFlight = 0, most = 0;
  for (const ScheduleUnit &unit : units) {
    // A micro-batch's activations go with its input gradients (weight
    // gradients keep only what their matmuls read).
    if (unit.kind == ScheduleUnit::Forward)
      ++inFlight;
    else if (unit.kind != ScheduleUnit::WeightGradient)
      --inFlight;
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

SmallVector<int64_t>
mlir::parc::balanceLayersPerStage(ArrayRef<double> layerCosts,
                                  double firstExtra, double lastExtra,
                                  int64_t stages) {
  int64_t layers = layerCosts.size();
  SmallVector<double> prefix(layers + 1, 0);
  for (int64_t i = 0; i < layers; ++i)
    prefix[i + 1] = prefix[i] + layerCosts[i];
  auto stageCost = [&](int64_t stage, int64_t begin, int64_t end) {
    return prefix[end] - prefix[begin] + (stage == 0 ? firstExtra : 0) +
           (stage == stages - 1 ? lastExtra : 0);
  };
  auto costliest = [&](ArrayRef<int64_t> perStage) {
    double most = 0;
    int64_t begin = 0;
    for (auto [stage, count] : llvm::enumerate(perStage)) {
      most = std::max(most, stageCost(stage, begin, begin + count));
      begin += count;
    }
    return most;
  };
  // Two passes of the same recurrence over "stages 0..s hold layers
  // [0, i)": the least costliest stage, then, among the splits that reach
  // it, the least sum of squared stage costs (the other stages balanced
  // too).
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  auto solve = [&](auto combine, double limit) {
    SmallVector<SmallVector<double>> best(
        stages, SmallVector<double>(layers + 1, kInfinity));
    SmallVector<SmallVector<int64_t>> start(
        stages, SmallVector<int64_t>(layers + 1, 0));
    for (int64_t i = 1; i <= layers; ++i)
      if (stageCost(0, 0, i) <= limit)
        best[0][i] = combine(0.0, stageCost(0, 0, i));
    for (int64_t s = 1; s < stages; ++s)
      for (int64_t i = s + 1; i <= layers; ++i)
        for (int64_t j = s; j < i; ++j) {
          double cost = stageCost(s, j, i);
          if (cost > limit || best[s - 1][j] == kInfinity)
            continue;
          double total = combine(best[s - 1][j], cost);
          if (total < best[s][i]) {
            best[s][i] = total;
            start[s][i] = j;
          }
        }
    SmallVector<int64_t> perStage(stages);
    for (int64_t s = stages - 1, end = layers; s >= 0; --s) {
      int64_t begin = s == 0 ? 0 : start[s][end];
      perStage[s] = end - begin;
      end = begin;
    }
    return std::make_pair(best[stages - 1][layers], perStage);
  };
  double least =
      solve([](double a, double b) { return std::max(a, b); }, kInfinity).first;
  double limit = least * (1 + 1e-9);
  auto squares = [&](ArrayRef<int64_t> split) {
    double sum = 0;
    int64_t begin = 0;
    for (auto [stage, count] : llvm::enumerate(split)) {
      double cost = stageCost(stage, begin, begin + count);
      sum += cost * cost;
      begin += count;
    }
    return sum;
  };
  auto [leastSquares, perStage] =
      solve([](double a, double b) { return a + b * b; }, limit);
  llvm::Expected<SmallVector<int64_t>> even =
      getLayersPerStage(stages, layers, std::nullopt);
  if (even && costliest(*even) <= limit &&
      squares(*even) <= leastSquares * (1 + 1e-9))
    return *even;
  llvm::consumeError(even.takeError());
  return perStage;
}
