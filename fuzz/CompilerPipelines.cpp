//===- CompilerPipelines.cpp - a module through parc's passes -------------===//

#include "CompilerPipelines.h"

#include "dist/IR/DistDialect.h"
#include "parc/Conversion/Passes.h"
#include "parc/Conversion/RuntimeCallOpInterface.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcInterfaces.h"
#include "parc/Interp/CollectiveEvaluableOpInterface.h"
#include "parc/Interp/EvaluableOpInterface.h"
#include "parc/Interp/Evaluator.h"
#include "parc/Interp/ModelData.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/PerRankPipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <fstream>
#include <unistd.h>

using namespace mlir;
using namespace mlir::parc;

const DialectRegistry &fuzz::getToolRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry();
    result->insert<ParcDialect, dist::DistDialect, func::FuncDialect,
                   LLVM::LLVMDialect>();
    registerLocalPartitionModels(*result);
    registerRuntimeCallModels(*result);
    interp::registerEvaluableOpInterfaceModels(*result);
    interp::registerCollectiveEvaluableOpInterfaceModels(*result);
    return result;
  }();
  return *registry;
}

namespace {

/// The evaluator allocates every tensor it meets and runs every FLOP in
/// scalar double loops; larger models are the passes' business only (a
/// fuzzer's memory limit or timeout is not a finding). gpt-tiny's forward
/// pass at batch 8 (6.5e7 FLOPs, the corpus's) takes about 4 s in the
/// sanitized build, its train step three times that.
constexpr int64_t kMaxEvaluatedElements = int64_t(1) << 16;
constexpr uint64_t kMaxEvaluatedFlops = uint64_t(1) << 26;

bool isSmallEnoughToEvaluate(func::FuncOp func) {
  bool small = true;
  uint64_t flops = 0;
  func.walk([&](Operation *op) {
    if (auto counted = dyn_cast<FlopCountOpInterface>(op))
      flops = llvm::SaturatingAdd(
          flops,
          static_cast<uint64_t>(std::max<int64_t>(0, counted.getFlopCount())));
    auto check = [&](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (tensor && (!tensor.hasStaticShape() ||
                     tensor.getNumElements() > kMaxEvaluatedElements))
        small = false;
    };
    for (Type type : op->getResultTypes())
      check(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          check(argument.getType());
  });
  return small && flops <= kMaxEvaluatedFlops;
}

/// parc-run's reference evaluation of each function, on initialized
/// arguments.
void evaluateFunctions(ModuleOp module) {
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !isSmallEnoughToEvaluate(func))
      continue;
    FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
    if (failed(arguments))
      continue;
    llvm::Expected<SmallVector<interp::Tensor>> values =
        interp::prepareArguments(*arguments, {}, /*seed=*/0);
    if (!values) {
      llvm::consumeError(values.takeError());
      continue;
    }
    (void)interp::evaluateFunction(func, *values, interp::Precision::Stored);
  }
}

/// Runs `build`'s passes on a clone of `module`; the clone when they
/// succeed.
template <typename BuildPasses>
OwningOpRef<ModuleOp> runOnClone(ModuleOp module, BuildPasses build) {
  OwningOpRef<ModuleOp> clone(module.clone());
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(*clone)))
    return nullptr;
  return clone;
}

/// The passes parc-compile runs, with the memory plan verified.
void addCompilePasses(PassManager &pm, StringRef planPath) {
  addLayoutPasses(pm, planPath);
  addPerRankPasses(pm);
  pm.addNestedPass<func::FuncOp>(createVerifyMemoryPlanPass());
}

/// The plan text in a file of its own: ApplyPlan reads plans from paths.
std::string writePlanFile(const std::string &planJson) {
  static const std::string path =
      "/tmp/parc-mlir-fuzz-plan." + std::to_string(getpid()) + ".json";
  std::ofstream file(path, std::ios::trunc);
  file << planJson;
  return path;
}

} // namespace

void fuzz::runCompilerPipelines(ModuleOp module,
                                const std::optional<std::string> &planJson) {
  std::string planPath = planJson ? writePlanFile(*planJson) : "";
  // parc-compile on the model as given, each function (one per pipeline
  // stage) lowered to runtime calls on its own, as parc-compile does.
  OwningOpRef<ModuleOp> planned = runOnClone(
      module, [&](PassManager &pm) { addCompilePasses(pm, planPath); });
  if (planned)
    for (func::FuncOp func : planned->getOps<func::FuncOp>())
      runOnClone(*planned, [&](PassManager &pm) {
        pm.addPass(createLowerToRuntimePass(
            LowerToRuntimePassOptions{func.getSymName().str()}));
      });
  // The train step first, in f32 and in bf16 mixed precision (whose step
  // the evaluator runs too: it rounds to bf16).
  for (const char *precision : {"f32", "bf16-mixed"}) {
    MakeTrainStepPassOptions stepOptions;
    stepOptions.precision = precision;
    OwningOpRef<ModuleOp> step = runOnClone(module, [&](PassManager &pm) {
      pm.addNestedPass<func::FuncOp>(createMakeTrainStepPass(stepOptions));
    });
    if (!step)
      continue;
    runOnClone(*step, [&](PassManager &pm) { addCompilePasses(pm, planPath); });
    if (StringRef(precision) != "f32")
      evaluateFunctions(*step);
  }
  evaluateFunctions(module);
}
