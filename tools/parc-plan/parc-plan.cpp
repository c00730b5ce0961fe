//===- parc-plan.cpp - search-parallel-plan -------------------------------===//
//
//   parc-plan model.mlir --cluster dgx-a100-80g --gpus 1024 --global-batch 1536
//             -o plan.json [--report report.md] [--trace schedule.json]
//
// Finds the fastest plan that fits in memory (docs/tools/parc-plan.md), says
// why, and writes it as plan.json for parc-compile.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/ModelFile.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Support/InputFile.h"
#include "parc/Plan/Calibration.h"
#include "parc/Plan/CompileCheck.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"

#include "dist/IR/DistOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::parc;
namespace cl = llvm::cl;

static cl::OptionCategory category("parc-plan options");
static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.mlir|model.onnx>"),
                                      cl::cat(category));
static cl::opt<std::string>
    clusterName("cluster",
                cl::desc("Cluster preset (dgx-a100-80g, dgx-h100, h200, "
                         "cpu-local) or a cluster.json file"),
                cl::cat(category));
static cl::opt<int64_t> gpus("gpus",
                             cl::desc("Devices to plan for (default: the "
                                      "cluster's nodes x devices per node)"),
                             cl::init(0), cl::cat(category));
static cl::opt<int64_t> globalBatch("global-batch",
                                    cl::desc("Samples per optimizer step"),
                                    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    dtype("dtype",
          cl::desc("f32 or bf16 (mixed precision); default bf16 where the "
                   "cluster has a bf16 peak"),
          cl::cat(category));
static cl::opt<double> memoryLimit(
    "memory-limit",
    cl::desc("GiB per device a plan may use (default: the device's memory)"),
    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    space("space",
          cl::desc("Dimensions to search, a subset of "
                   "dp,tp,sp,pp,zero,recompute,mb,sync (default: all but "
                   "sync, which compares the ring all-reduce with parameter "
                   "servers)"),
          cl::cat(category));
static cl::opt<std::string>
    fix("fix",
        cl::desc("Pinned choices, e.g. tp=8,pp=8,dp=4,mb=1,sp=on,zero=1,"
                 "recompute=selective|full|none,schedule=1f1b,v=2,"
                 "sync=allreduce|parameter-server|local-sgd,servers=8,"
                 "placement=colocated|dedicated,sync_every=4"),
        cl::cat(category));
static cl::opt<std::string> baseline(
    "baseline",
    cl::desc("A configuration (as --fix) to compare the chosen plan with"),
    cl::cat(category));
static cl::opt<int64_t> top("top", cl::desc("Alternatives to list"),
                            cl::init(5), cl::cat(category));
static cl::opt<std::string> format("format", cl::desc("text or json"),
                                   cl::init("text"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Write plan.json here"),
                                       cl::value_desc("file"),
                                       cl::cat(category));
static cl::opt<std::string> reportFile("report",
                                       cl::desc("Write a markdown report"),
                                       cl::cat(category));
static cl::opt<std::string>
    traceFile("trace", cl::desc("Write a Chrome trace of one step"),
              cl::cat(category));
static cl::opt<std::string>
    megatronFile("emit-megatron",
                 cl::desc("Write the plan as Megatron-LM arguments"),
                 cl::cat(category));
static cl::opt<std::string>
    deepspeedFile("emit-deepspeed",
                  cl::desc("Write the plan as a DeepSpeed config"),
                  cl::cat(category));
static cl::opt<bool> overlapGradReduce(
    "overlap-grad-reduce",
    cl::desc("Hide the data-parallel gradient reduction behind the last "
             "micro-batch's backward pass (default true; Megatron-LM before "
             "2023 did not)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> kernels(
    "kernels",
    cl::desc("fused (default) or unfused: price fused ops such as attention "
             "as implementations that move their intermediates through "
             "memory (Megatron-LM before FlashAttention)"),
    cl::init("fused"), cl::cat(category));
static cl::opt<bool> attentionDropout(
    "attention-dropout",
    cl::desc("With --kernels unfused: also price the dropout of the "
             "attention probabilities as Megatron-LM's unfused kernels run "
             "it (GPT-3 and Narayanan et al. SC21 trained with 0.1)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> calibrateMachine(
    "calibrate",
    cl::desc("Measure this machine through parc-compile's programs under "
             "mpirun and write cluster.json to -o"),
    cl::cat(category));
static cl::opt<int64_t> calibrationRanks(
    "ranks", cl::desc("Ranks --calibrate measures on (default 2)"),
    cl::init(2), cl::cat(category));
static cl::opt<std::string> funcName(
    "func", cl::desc("Model function (default: @forward, or the only one)"),
    cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "parc-plan: " << message << "\n";
  return 1;
}

/// Writes `content` to `path` through a temporary file in the same
/// directory, so a failure never leaves half a file.
static LogicalResult writeFileAtomically(StringRef path, StringRef content) {
  SmallString<128> temporary(path);
  temporary += ".tmp-%%%%%%";
  int fd;
  SmallString<128> model;
  if (std::error_code code =
          llvm::sys::fs::createUniqueFile(temporary, fd, model)) {
    fail("cannot write " + path + ": " + code.message());
    return failure();
  }
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << content;
    out.flush();
    if (out.has_error()) {
      out.clear_error();
      llvm::sys::fs::remove(model);
      fail("cannot write " + path);
      return failure();
    }
  }
  if (std::error_code code = llvm::sys::fs::rename(model, path)) {
    llvm::sys::fs::remove(model);
    fail("cannot write " + path + ": " + code.message());
    return failure();
  }
  return success();
}

/// Reads "tp=8,pp=2,sp=on,..." into `choice`.
static LogicalResult parseChoice(StringRef flag, StringRef text,
                                 PlanChoice &choice) {
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    auto number = [&](std::optional<int64_t> &field) {
      int64_t parsed;
      if (value.getAsInteger(10, parsed) || parsed < 0) {
        fail("--" + flag + " " + key + "=" + value +
             ": expected a non-negative integer");
        return failure();
      }
      field = parsed;
      return success();
    };
    if (key == "tp" || key == "pp" || key == "dp" || key == "mb" ||
        key == "v" || key == "servers" || key == "sync_every") {
      std::optional<int64_t> &field = key == "tp"        ? choice.tp
                                      : key == "pp"      ? choice.pp
                                      : key == "dp"      ? choice.dp
                                      : key == "mb"      ? choice.microBatch
                                      : key == "servers" ? choice.servers
                                      : key == "sync_every"
                                          ? choice.syncEvery
                                          : choice.virtualStages;
      if (failed(number(field)))
        return failure();
      if (*field < 1) {
        fail("--" + flag + " " + key + " must be at least 1");
        return failure();
      }
    } else if (key == "zero") {
      if (failed(number(choice.zero)))
        return failure();
      if (*choice.zero > 3) {
        fail("--" + flag + " zero must be 0, 1, 2 or 3");
        return failure();
      }
    } else if (key == "sp") {
      if (value != "on" && value != "off") {
        fail("--" + flag + " sp must be on or off");
        return failure();
      }
      choice.sequenceParallel = value == "on";
    } else if (key == "recompute") {
      if (value == "none")
        choice.recompute = Recompute::None;
      else if (value == "selective")
        choice.recompute = Recompute::Selective;
      else if (value == "full")
        choice.recompute = Recompute::Full;
      else {
        fail("--" + flag + " recompute must be none, selective or full");
        return failure();
      }
    } else if (key == "schedule") {
      // PipeDream-2BW changes what is trained (stale gradients): a
      // planner never picks it, and does not price it.
      std::optional<PipelineSchedule> schedule =
          parsePipelineScheduleName(value);
      if (!schedule || *schedule == PipelineSchedule::PipeDream2BW) {
        fail("--" + flag +
             " schedule must be gpipe, 1f1b, interleaved-1f1b or zb-h1");
        return failure();
      }
      choice.schedule = schedule;
    } else if (key == "sync") {
      if (value == "allreduce")
        choice.sync = DataParallelSync::AllReduce;
      else if (value == "parameter-server")
        choice.sync = DataParallelSync::ParameterServer;
      else if (value == "local-sgd")
        choice.sync = DataParallelSync::LocalSgd;
      else {
        fail("--" + flag +
             " sync must be allreduce, parameter-server or local-sgd");
        return failure();
      }
    } else if (key == "placement") {
      if (value != "colocated" && value != "dedicated") {
        fail("--" + flag + " placement must be colocated or dedicated");
        return failure();
      }
      choice.placement = value == "colocated" ? ServerPlacement::Colocated
                                              : ServerPlacement::Dedicated;
    } else {
      fail("--" + flag + ": unknown choice '" + key +
           "' (tp, pp, dp, mb, v, zero, sp, recompute, schedule, sync, "
           "servers, placement, sync_every)");
      return failure();
    }
  }
  if (choice.virtualStages && *choice.virtualStages > 1 && !choice.schedule)
    choice.schedule = PipelineSchedule::Interleaved1F1B;
  return success();
}

static LogicalResult parseSpace(StringRef text, SearchSpace &result) {
  result = SearchSpace{false, false, false, false, false, false, false};
  SmallVector<StringRef> items;
  text.split(items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    item = item.trim();
    bool *field = item == "dp"          ? &result.dp
                  : item == "tp"        ? &result.tp
                  : item == "sp"        ? &result.sp
                  : item == "pp"        ? &result.pp
                  : item == "zero"      ? &result.zero
                  : item == "recompute" ? &result.recompute
                  : item == "mb"        ? &result.microBatch
                  : item == "sync"      ? &result.sync
                                        : nullptr;
    if (!field) {
      fail("--space: unknown dimension '" + item +
           "' (dp, tp, sp, pp, zero, recompute, mb, sync)");
      return failure();
    }
    *field = true;
  }
  return success();
}

static std::optional<ClusterSpec> loadCluster(StringRef name) {
  if (std::optional<ClusterSpec> preset = getClusterPreset(name))
    return preset;
  auto buffer = readInputFile(name, "the cluster file",
                                      kMaxConfigFileBytes);
  if (!buffer) {
    std::string presets = llvm::join(getClusterPresetNames(), ", ");
    fail("--cluster " + name + ": neither a preset (" + presets +
         ") nor a readable file: " + llvm::toString(buffer.takeError()));
    return std::nullopt;
  }
  llvm::Expected<ClusterSpec> cluster =
      readCluster((*buffer)->getBuffer(), name);
  if (!cluster) {
    fail(llvm::toString(cluster.takeError()));
    return std::nullopt;
  }
  return *cluster;
}

/// --calibrate: measures the machine and writes cluster.json.
static int runCalibration(const char *argv0) {
  if (outputFile.empty())
    return fail("--calibrate writes cluster.json to -o FILE");
  if (calibrationRanks < 1 || calibrationRanks > 1024)
    return fail("--ranks must be between 1 and 1024");
  CalibrationOptions options;
  options.ranks = calibrationRanks;
  // parc-compile sits next to parc-plan.
  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runCalibration));
  SmallString<128> compiler(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(compiler, "parc-compile");
  options.compiler = std::string(compiler);
  llvm::Expected<ClusterSpec> cluster = calibrate(options, llvm::errs());
  if (!cluster)
    return fail("--calibrate: " + llvm::toString(cluster.takeError()));
  if (failed(writeFileAtomically(outputFile, writeCluster(*cluster))))
    return 1;
  llvm::outs() << "wrote " << outputFile << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "parc-plan: search the parallel plans of a "
                              "model\n");
  if (calibrateMachine)
    return runCalibration(argv[0]);
  if (inputFile.empty())
    return fail("no model given: parc-plan MODEL.(mlir|onnx) --cluster ... "
                "--global-batch B (or --calibrate -o cluster.json)");
  if (clusterName.empty())
    return fail("--cluster is needed: a preset (" +
                llvm::join(getClusterPresetNames(), ", ") +
                ") or a cluster.json file");
  if (kernels != "fused" && kernels != "unfused")
    return fail("--kernels must be fused or unfused, got '" + kernels + "'");
  if (attentionDropout && kernels != "unfused")
    return fail("--attention-dropout prices the dropout step of unfused "
                "attention; a fused kernel drops out in place at no extra "
                "traffic: give --kernels unfused");
  if (format != "text" && format != "json")
    return fail("--format must be text or json, got '" + format + "'");
  // Bounded like a plan's ranks, so that enumerating divisors stays cheap.
  if (globalBatch < 1 || globalBatch > kMaxPlanRanks)
    return fail("--global-batch must be between 1 and 2^31");
  if (gpus < 0 || gpus > kMaxPlanRanks)
    return fail("--gpus must be between 1 and 2^31");
  if (top < 0)
    return fail("--top must be at least 0");

  std::optional<ClusterSpec> cluster = loadCluster(clusterName);
  if (!cluster)
    return 1;
  SearchOptions options;
  options.globalBatch = globalBatch;
  options.overlapGradientReduction = overlapGradReduce;
  options.gpus = gpus ? int64_t(gpus) : cluster->nodes * cluster->devicesPerNode;
  if (options.gpus < 1)
    return fail("--gpus is needed: the cluster '" + cluster->name +
                "' does not say how many nodes it has");
  if (cluster->nodes > 0 &&
      options.gpus > cluster->nodes * cluster->devicesPerNode)
    return fail("--gpus " + std::to_string(options.gpus) + " exceeds the " +
                std::to_string(cluster->nodes * cluster->devicesPerNode) +
                " devices of " + cluster->name);
  options.dtype = dtype.empty() ? (cluster->getPeakFlops("bf16") ? "bf16"
                                                                 : "f32")
                                : dtype.getValue();
  if (options.dtype != "f32" && options.dtype != "bf16")
    return fail("--dtype must be f32 or bf16, got '" + options.dtype + "'");
  if (!cluster->getPeakFlops(options.dtype))
    return fail("the cluster '" + cluster->name + "' gives no peak for " +
                options.dtype);
  if (memoryLimit < 0 || !std::isfinite(memoryLimit))
    return fail("--memory-limit must be a positive number of GiB");
  options.memoryLimit = memoryLimit > 0 ? memoryLimit * 1024.0 * 1024 * 1024
                                        : cluster->memoryBytes;
  if (!space.empty() && failed(parseSpace(space, options.space)))
    return 1;
  if (failed(parseChoice("fix", fix, options.fixed)))
    return 1;
  std::optional<PlanChoice> baselineChoice;
  if (!baseline.empty()) {
    baselineChoice.emplace();
    if (failed(parseChoice("baseline", baseline, *baselineChoice)))
      return 1;
  }

  DialectRegistry registry;
  registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect>();
  // The compile check runs the partitioner, which needs the local forms.
  registerLocalPartitionModels(registry);
  MLIRContext context(registry);
  // A failing op is named with its location; printing it too would bury
  // the message under the whole function.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = loadModel(inputFile, sourceMgr, &context);
  if (!module)
    return 1;
  func::FuncOp func = findModelFunction(*module, funcName);
  if (!func)
    return fail("no model function in " + inputFile);
  FailureOr<ModelGraph> graph =
      ModelGraph::build(func, /*mixedPrecision=*/options.dtype == "bf16");
  if (failed(graph))
    return 1;

  auto start = std::chrono::steady_clock::now();
  CostModel costs(*cluster, options.dtype, kernels == "unfused",
                  attentionDropout);
  StrategyIlp ilp(*graph, costs);
  std::string error;
  FailureOr<SearchResult> result =
      searchPlans(*graph, costs, ilp, options, error);
  if (failed(result))
    return fail(error);
  std::optional<EvaluatedPlan> baselinePlan;
  if (baselineChoice) {
    SearchOptions fixed = options;
    fixed.fixed = *baselineChoice;
    FailureOr<SearchResult> compared =
        searchPlans(*graph, costs, ilp, fixed, error);
    if (failed(compared))
      return fail("--baseline: " + error);
    if (compared->plans.empty())
      return fail("--baseline " + baseline + " fits nowhere: " +
                  (compared->rejected.empty()
                       ? std::string("no configuration matches it")
                       : compared->rejected.front().reason));
    baselinePlan = compared->plans.front();
  }
  double searchSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();

  ReportContext report{inputFile, cluster->name, &options, searchSeconds, top};
  // Buildable plans among those listed are compiled to check their memory.
  checkBuildablePlans(*result, *graph, report, top + 1);
  if (result->plans.empty()) {
    std::string reason =
        result->rejected.empty()
            ? std::string("no configuration matches the constraints")
            : "the smallest needs " + formatBytes(result->smallestMemory) +
                  " per device (mostly " + result->smallestMemoryTerm +
                  "); the limit is " + formatBytes(options.memoryLimit);
    if (!result->rejected.empty() && result->smallestMemory == 0)
      reason = result->rejected.front().configuration + ": " +
               result->rejected.front().reason;
    printReport(llvm::errs(), *result, *graph, report, false, nullptr);
    return fail("no plan fits: " + reason);
  }
  const EvaluatedPlan &chosen = result->plans.front();
  const EvaluatedPlan *buildable = result->getFastestBuildable();
  if (format == "json")
    llvm::outs() << writeJsonSummary(*result, *graph, report);
  else
    printReport(llvm::outs(), *result, *graph, report, false,
                baselinePlan ? &*baselinePlan : nullptr);

  if (!reportFile.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    printReport(os, *result, *graph, report, true,
                baselinePlan ? &*baselinePlan : nullptr);
    if (failed(writeFileAtomically(reportFile, text)))
      return 1;
  }
  if (!traceFile.empty() &&
      failed(writeFileAtomically(traceFile, writeScheduleTrace(chosen))))
    return 1;
  if (!megatronFile.empty() &&
      failed(writeFileAtomically(megatronFile,
                                 writeMegatronArguments(chosen, options))))
    return 1;
  if (!deepspeedFile.empty() &&
      failed(writeFileAtomically(deepspeedFile,
                                 writeDeepSpeedConfig(chosen, options))))
    return 1;
  // Only a plan parc-compile builds becomes plan.json.
  if (!outputFile.empty()) {
    if (!buildable)
      return fail("not writing " + outputFile +
                  ": no plan that fits is one parc-compile builds today; the "
                  "fastest, " + chosen.describe() + ", needs " +
                  chosen.notBuildable);
    if (failed(writeFileAtomically(
            outputFile, writePlan(buildPlan(*buildable, *graph, report)))))
      return 1;
  }
  return 0;
}
