//===- PerRankPipeline.cpp - from a model to per-rank programs ------------===//

#include "parc/Transforms/PerRankPipeline.h"

#include "parc/Transforms/Passes.h"

using namespace mlir;

void mlir::parc::addLayoutPasses(OpPassManager &pm, StringRef planFile) {
  pm.addPass(createVerifyModelPass());
  if (!planFile.empty())
    pm.addPass(createApplyPlanPass(ApplyPlanPassOptions{planFile.str()}));
  // Before propagation: the groups the plan chose decide the layout.
  pm.addNestedPass<func::FuncOp>(createLowerBatchNormPass());
  pm.addNestedPass<func::FuncOp>(createShardingPropagationPass());
}

void mlir::parc::addPerRankPasses(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createPartitionPass());
  pm.addNestedPass<func::FuncOp>(createLocalSgdPass());
  pm.addPass(createParameterServerPass());
  pm.addPass(createPipelinePartitionPass());
  pm.addNestedPass<func::FuncOp>(createMemoryPlanPass());
}
