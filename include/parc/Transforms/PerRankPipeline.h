//===- PerRankPipeline.h - from a laid-out program to per-rank ones -*- C++
//-*-===//
//
// The passes every compile runs once sharding propagation has laid out the
// program, in order: --parc-partition, --parc-local-sgd,
// --parc-pipeline-partition and --parc-plan-memory. parc-compile, the
// planner's compile check and the fuzzers build this one list.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_PERRANKPIPELINE_H
#define PARC_TRANSFORMS_PERRANKPIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace mlir::parc {

/// Adds the passes that partition a propagated module into per-rank (and
/// per-stage) programs with their memory plans.
void addPerRankPasses(OpPassManager &pm);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_PERRANKPIPELINE_H
