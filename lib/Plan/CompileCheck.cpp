//===- CompileCheck.cpp - a plan through parc-compile's passes ------------===//

#include "parc/Plan/CompileCheck.h"

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::parc;

FailureOr<CompiledFigures> mlir::parc::compilePlan(func::FuncOp forward,
                                                   const Plan &plan,
                                                   std::string &error) {
  // The plan pass reads a file, as parc-compile's does.
  SmallString<128> planPath;
  int fd;
  if (std::error_code code = llvm::sys::fs::createTemporaryFile(
          "parc-plan", "json", fd, planPath)) {
    error = "cannot write a temporary plan: " + code.message();
    return failure();
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << writePlan(plan);
  }
  auto removePlan = llvm::make_scope_exit(
      [&] { llvm::sys::fs::remove(planPath); });

  MLIRContext *context = forward.getContext();
  OwningOpRef<ModuleOp> module = ModuleOp::create(forward.getLoc());
  OpBuilder builder(context);
  builder.setInsertionPointToStart(module->getBody());
  auto step = cast<func::FuncOp>(builder.clone(*forward));

  std::string messages;
  ScopedDiagnosticHandler capture(context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
      messages += (messages.empty() ? "" : "; ") + diagnostic.str();
    return success();
  });
  PassManager pm(context);
  MakeTrainStepPassOptions stepOptions;
  stepOptions.precision =
      getPrecisionName(plan.precision.value_or(Precision::F32)).str();
  pm.addNestedPass<func::FuncOp>(createMakeTrainStepPass(stepOptions));
  pm.addPass(createVerifyModelPass());
  pm.addPass(createApplyPlanPass(ApplyPlanPassOptions{planPath.str().str()}));
  pm.addNestedPass<func::FuncOp>(createShardingPropagationPass());
  pm.addNestedPass<func::FuncOp>(createPartitionPass());
  pm.addPass(createPipelinePartitionPass());
  pm.addNestedPass<func::FuncOp>(createMemoryPlanPass());
  if (failed(pm.run(*module))) {
    error = messages.empty() ? "the compiler rejected the plan" : messages;
    return failure();
  }
  // A pipeline's figures are its heaviest stage's: the memory that must
  // fit on every device.
  FailureOr<SmallVector<func::FuncOp>> stages = getStageFunctions(*module);
  if (failed(stages)) {
    error = messages;
    return failure();
  }
  if (stages->empty())
    return measureCompiledProgram(step);
  std::optional<CompiledFigures> heaviest;
  for (func::FuncOp stage : *stages) {
    FailureOr<CompiledFigures> figures = measureCompiledProgram(stage);
    if (failed(figures))
      return failure();
    if (!heaviest || figures->arenaBytes > heaviest->arenaBytes)
      heaviest = std::move(*figures);
  }
  return *heaviest;
}

void mlir::parc::checkBuildablePlans(SearchResult &result,
                                     const ModelGraph &graph,
                                     const ReportContext &context,
                                     int64_t count) {
  double limit = context.options->memoryLimit;
  // Plans the compiler refuses do not use up the count, but the attempts
  // are bounded: each is a whole compile.
  int64_t attempts = 4 * count;
  for (size_t i = 0; i < result.plans.size() && count > 0 && attempts > 0;) {
    EvaluatedPlan &plan = result.plans[i];
    if (!plan.buildable) {
      ++i;
      continue;
    }
    --attempts;
    std::string error;
    FailureOr<CompiledFigures> figures =
        compilePlan(graph.getFunction(), buildPlan(plan, graph, context),
                    error);
    std::string reason;
    if (failed(figures))
      reason = "parc-compile refuses it: " + error;
    else if (figures->arenaBytes > limit)
      reason = "out of memory once compiled: the memory plan needs " +
               std::to_string(figures->arenaBytes) + " bytes per rank";
    if (reason.empty()) {
      plan.compiledArenaBytes = figures->arenaBytes;
      --count;
      ++i;
      continue;
    }
    result.rejected.push_back({plan.describe(), reason});
    result.plans.erase(result.plans.begin() + i);
  }
}
