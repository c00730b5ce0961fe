//===- CompileCheck.h - a plan through parc-compile's passes ----*- C++ -*-===//
//
// A plan that parc-compile builds can be checked before it is emitted: the
// train step of the forward model (AdamW, as --parc-make-train-step makes
// it) goes through the plan, propagation, partitioning and the static memory
// plan in process, and the arena the executables will allocate is read off.
// The planner reports it beside its analytical prediction and rejects a plan
// whose compiled memory does not fit.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_COMPILECHECK_H
#define PARC_PLAN_COMPILECHECK_H

#include "parc/Plan/CompileReport.h"
#include "parc/Plan/Report.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::parc {

/// What the compiled program's device ranks need at most (dedicated
/// parameter servers are not devices): the arena of the stage that needs
/// the most memory and the traffic of the one that sends the most, as a
/// plan predicts them.
struct CompiledPeaks {
  int64_t arenaBytes = 0;
  double trafficBytes = 0;
};

/// Compiles the train step of `forward` under `plan` up to the memory plan;
/// on failure `error` says which pass refused it and why. `propagated`, if
/// given, sees the train step once sharding propagation has laid it out.
FailureOr<CompiledPeaks>
compilePlan(func::FuncOp forward, const Plan &plan, std::string &error,
            llvm::function_ref<void(func::FuncOp)> propagated = {});

/// Compiles the first `count` buildable plans of `result` (fastest first)
/// and records their arenas; a plan whose arena exceeds the memory limit, or
/// that the compiler refuses, moves to the rejected list with the reason.
/// Where propagation lays a value out otherwise than the plan's
/// ILP, the plan pins it (findLayoutPins) and is compiled again, so
/// that the emitted plan builds the ILP's program.
void checkBuildablePlans(SearchResult &result, const ModelGraph &graph,
                         const ReportContext &context, int64_t count);

} // namespace mlir::parc

#endif // PARC_PLAN_COMPILECHECK_H
