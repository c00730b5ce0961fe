//===- PerRankPipeline.cpp - from a laid-out program to per-rank ones -----===//

#include "parc/Transforms/PerRankPipeline.h"

#include "parc/Transforms/Passes.h"

using namespace mlir;

void mlir::parc::addPerRankPasses(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createPartitionPass());
  pm.addNestedPass<func::FuncOp>(createLocalSgdPass());
  pm.addPass(createPipelinePartitionPass());
  pm.addNestedPass<func::FuncOp>(createMemoryPlanPass());
}
