//===- CompileCheck.cpp - a plan through parc-compile's passes ------------===//

#include "parc/Plan/CompileCheck.h"

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/PerRankPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;

FailureOr<CompiledPeaks>
mlir::parc::compilePlan(func::FuncOp forward, const Plan &plan,
                        std::string &error,
                        llvm::function_ref<void(func::FuncOp)> propagated) {
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
  addLayoutPasses(pm, planPath);
  PassManager lowering(context);
  addPerRankPasses(lowering);
  bool laidOut = succeeded(pm.run(*module));
  if (laidOut && propagated)
    propagated(step);
  if (!laidOut || failed(lowering.run(*module))) {
    error = messages.empty() ? "the compiler rejected the plan" : messages;
    return failure();
  }
  FailureOr<SmallVector<func::FuncOp>> stages = getStageFunctions(*module);
  if (failed(stages)) {
    error = messages;
    return failure();
  }
  if (stages->empty())
    stages->push_back(step);
  std::vector<CompiledFigures> figures;
  for (func::FuncOp stage : *stages) {
    FailureOr<CompiledFigures> measured = measureCompiledProgram(stage);
    if (failed(measured))
      return failure();
    figures.push_back(std::move(*measured));
  }
  PredictedStages predicted = findPredictedStages(*stages, figures);
  return CompiledPeaks{figures[predicted.heaviest].arenaBytes,
                       figures[predicted.busiest].getTrafficBytes()};
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
    std::vector<NamedSharding> pins;
    auto findPins = [&](func::FuncOp step) {
      pins = findLayoutPins(step, plan, graph);
      llvm::erase_if(pins, [&](const NamedSharding &pin) {
        return llvm::any_of(plan.layoutPins, [&](const NamedSharding &kept) {
          return kept.name == pin.name;
        });
      });
    };
    FailureOr<CompiledPeaks> figures = compilePlan(
        graph.getFunction(), buildPlan(plan, graph, context), error, findPins);
    // Each pin can move the values propagation lays out from it; a few
    // rounds settle. The pins stay where the compiled step then moves the
    // bytes the ILP priced more closely, with its arena within 5% of the
    // predicted memory, or no further off than before, or off by less than
    // the traffic came closer (relative errors); or where its arena comes
    // closer, and no larger, and its traffic stays as close; and never one
    // that exceeds the device's memory over one that fits. A round the
    // compiler refuses ends the rounds; one that refuses or misses with a
    // weight gradient's operands pinned (`@N:K`) is tried again without
    // them, which later rounds then leave out.
    auto trafficError = [&](const CompiledPeaks &compiled) {
      return std::abs(compiled.trafficBytes - plan.commBytesPerRank) /
             std::max(1.0, plan.commBytesPerRank);
    };
    double predictedMemory = plan.memory.total();
    auto memoryError = [&](const CompiledPeaks &compiled) {
      return std::abs(double(compiled.arenaBytes) - predictedMemory) /
             std::max(1.0, predictedMemory);
    };
    auto closer = [&](const CompiledPeaks &pinned,
                      const CompiledPeaks &unpinned) {
      double traffic = trafficError(pinned), memory = memoryError(pinned);
      double wasTraffic = trafficError(unpinned),
             wasMemory = memoryError(unpinned);
      if (traffic <= wasTraffic && memory < wasMemory &&
          pinned.arenaBytes <= unpinned.arenaBytes)
        return true;
      return traffic < wasTraffic &&
             (memory <= std::max(0.05, wasMemory) ||
              traffic + memory < wasTraffic + wasMemory);
    };
    // Each round pins what the last compile laid out otherwise than the
    // ILP, on top of the pins before it; a round may read further off than
    // unpinned until the next settles it, so the closest compile wins.
    std::vector<NamedSharding> closestPins = plan.layoutPins;
    FailureOr<CompiledPeaks> closest = figures;
    // A compile that needs more than the device has is never closer than
    // one that fits.
    auto closerFitting = [&](const CompiledPeaks &pinned) {
      return (pinned.arenaBytes <= limit || closest->arenaBytes > limit) &&
             closer(pinned, *closest);
    };
    auto isUsePin = [](const NamedSharding &pin) {
      return StringRef(pin.name).contains(':');
    };
    // Use pins a round had to drop are not tried again.
    llvm::StringSet<> droppedUsePins;
    for (int round = 0; round < 3 && succeeded(closest); ++round) {
      std::vector<NamedSharding> kept = plan.layoutPins;
      auto compileWith = [&](ArrayRef<NamedSharding> added) {
        plan.layoutPins = kept;
        llvm::append_range(plan.layoutPins, added);
        std::string pinnedError;
        return compilePlan(graph.getFunction(), buildPlan(plan, graph, context),
                           pinnedError, findPins);
      };
      std::vector<NamedSharding> added = pins;
      llvm::erase_if(added, [&](const NamedSharding &pin) {
        return droppedUsePins.contains(pin.name);
      });
      if (added.empty())
        break;
      FailureOr<CompiledPeaks> pinned = compileWith(added);
      if ((failed(pinned) || !closerFitting(*pinned)) &&
          llvm::any_of(added, isUsePin)) {
        for (const NamedSharding &pin : added)
          if (isUsePin(pin))
            droppedUsePins.insert(pin.name);
        std::vector<NamedSharding> withoutUses = added;
        llvm::erase_if(withoutUses, isUsePin);
        FailureOr<CompiledPeaks> retried = failure();
        if (!withoutUses.empty())
          retried = compileWith(withoutUses);
        if (failed(retried)) {
          // The first compile, if any, is this round's; its pins were
          // overwritten by the retry's, so the rounds end with it.
          if (succeeded(pinned) && closerFitting(*pinned)) {
            closest = pinned;
            closestPins = kept;
            llvm::append_range(closestPins, added);
          }
          break;
        }
        pinned = std::move(retried);
      }
      if (failed(pinned))
        break;
      if (closerFitting(*pinned)) {
        closest = pinned;
        closestPins = plan.layoutPins;
      }
    }
    plan.layoutPins = std::move(closestPins);
    figures = std::move(closest);
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
