//===- PerRankPipeline.h - from a model to per-rank programs ----*- C++ -*-===//
//
// The passes every compile runs, in two lists that parc-compile, the
// planner's compile check and the fuzzers all build: laying the program out
// (--parc-verify-model, --parc-apply-plan, --parc-lower-batch-norm,
// --parc-propagate-sharding), then, from the laid-out program,
// --parc-partition, --parc-local-sgd, --parc-parameter-server,
// --parc-pipeline-partition and --parc-plan-memory.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_PERRANKPIPELINE_H
#define PARC_TRANSFORMS_PERRANKPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::parc {

/// Adds the passes that lay a model out: its plan's shardings (none for an
/// empty `planFile`) and their propagation.
void addLayoutPasses(OpPassManager &pm, StringRef planFile);

/// Adds the passes that partition a propagated module into per-rank (and
/// per-stage) programs with their memory plans.
void addPerRankPasses(OpPassManager &pm);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_PERRANKPIPELINE_H
