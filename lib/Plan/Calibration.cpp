//===- Calibration.cpp - measuring the machine parc runs on ---------------===//

#include "parc/Plan/Calibration.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcInterfaces.h"
#include "parc/Models/Models.h"
#include "parc/Plan/Report.h"
#include "parc/Plan/Search.h"
#include "parc/Transforms/Passes.h"

#include "dist/IR/DistOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
using namespace mlir::parc;
using llvm::SmallString;
using llvm::StringRef;

namespace {

/// One micro-benchmark: a sharded model module.
struct Benchmark {
  std::string name;
  std::string mlir;
};

class Calibrator {
public:
  Calibrator(const CalibrationOptions &options, llvm::raw_ostream &log)
      : options(options), log(log) {}

  llvm::Expected<ClusterSpec> run();

private:
  /// Seconds per step of `benchmark` on all ranks.
  llvm::Expected<double> measure(const Benchmark &benchmark,
                                 llvm::StringRef plan = "");
  /// Fits the bandwidth-bound efficiency and the collective wait to
  /// measured reference train steps.
  llvm::Error fitReferenceSteps(ClusterSpec &cluster);
  llvm::Error fail(const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   message.str());
  }

  const CalibrationOptions &options;
  llvm::raw_ostream &log;
  std::string mpirun;
  SmallString<128> directory;
};

} // namespace

/// The mesh of every micro-benchmark: one axis over the ranks. Tensors split
/// over it give every rank the same local problem.
static std::string meshOp(int64_t ranks) {
  return llvm::formatv("dist.mesh @mesh axes = [dp = {0}]\n", ranks).str();
}
static constexpr llvm::StringLiteral kSplit =
    "dist.sharding = #dist.sharding<@mesh, [[dp], []]>";

/// `count` GEMMs `y_i = x w_i`, [n, n] x [n, n] f32 on every rank, each
/// with its own weight. (A chain `y = y w` shrinks by |w| sqrt(n) per GEMM
/// into denormal numbers, which the cpu multiplies 30x slower.)
static std::string gemmModel(int64_t ranks, int64_t n, int64_t count) {
  std::string type = llvm::formatv("tensor<{0}x{1}xf32>", ranks * n, n).str();
  std::string weight = llvm::formatv("tensor<{0}x{0}xf32>", n).str();
  std::string weights, results, body, values, types;
  for (int64_t i = 0; i < count; ++i) {
    weights += llvm::formatv(", %w{0}: {1} {{parc.name = \"w{0}\", "
                             "parc.role = \"param\"}",
                             i, weight);
    results += llvm::formatv("{0}{1} {{{2}, parc.name = \"y{3}\"}",
                             i ? ", " : "", type, kSplit, i);
    body += llvm::formatv("  %y{0} = parc.matmul %x, %w{0} : {1}, {2} -> {1}\n",
                          i, type, weight);
    values += llvm::formatv("{0}%y{1}", i ? ", " : "", i);
    types += (i ? ", " : "") + type;
  }
  return meshOp(ranks) +
         llvm::formatv("func.func @forward(%x: {0} {{{1}, parc.name = \"x\", "
                       "parc.role = \"input\"}{2}) -> ({3}) {{\n{4}  return "
                       "{5} : {6}\n}\n",
                       type, kSplit, weights, results, body, values, types)
             .str();
}

/// `count` chained adds of [1, n] f32 tensors on every rank.
static std::string addChainModel(int64_t ranks, int64_t n, int64_t count) {
  std::string type = llvm::formatv("tensor<{0}x{1}xf32>", ranks, n).str();
  std::string body;
  std::string last = "%x";
  for (int64_t i = 0; i < count; ++i) {
    body += llvm::formatv("  %a{0} = parc.add {1}, %x : {2}, {2} -> {2}\n",
                          i, last, type);
    last = "%a" + std::to_string(i);
  }
  return meshOp(ranks) +
         llvm::formatv("func.func @forward(%x: {0} {{{1}, parc.name = \"x\", "
                       "parc.role = \"input\"}) -> ({0} {{{1}, parc.name = "
                       "\"y\"}) {{\n{2}  return {3} : {0}\n}\n",
                       type, kSplit, body, last)
             .str();
}

/// The FLOPs of a micro-benchmark's ops as the cost model counts them
/// (FlopCountOpInterface), over all ranks; 0 if it does not parse.
static double countFlops(StringRef text) {
  DialectRegistry registry;
  registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect>();
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  double flops = 0;
  if (module)
    module->walk([&](FlopCountOpInterface op) { flops += op.getFlopCount(); });
  return flops;
}

/// `count` chained causal attentions `y = attention(y, k, v)` over [2, 4,
/// seq, 64] f32 on every rank.
static std::string attentionModel(int64_t ranks, int64_t seq, int64_t count) {
  std::string type =
      llvm::formatv("tensor<{0}x4x{1}x64xf32>", 2 * ranks, seq).str();
  std::string split = "dist.sharding = #dist.sharding<@mesh, [[dp], [], [], "
                      "[]]>";
  std::string body, last = "%q";
  for (int64_t i = 0; i < count; ++i) {
    body += llvm::formatv("  %y{0} = parc.attention {1}, %k, %v causal scale "
                          "= 0.125 : {2}, {2}, {2}\n",
                          i, last, type);
    last = "%y" + std::to_string(i);
  }
  std::string arguments;
  for (StringRef name : {"q", "k", "v"})
    arguments +=
        llvm::formatv("{0}%{1}: {2} {{{3}, parc.name = \"{1}\", "
                      "parc.role = \"input\"}",
                      arguments.empty() ? "" : ", ", name, type, split);
  return meshOp(ranks) +
         llvm::formatv("func.func @forward({0}) -> ({1} {{{2}, parc.name = "
                       "\"y\"}) {{\n{3}  return {4} : {1}\n}\n",
                       arguments, type, split, body, last)
             .str();
}

/// `count` sums over the rows of a [ranks, n] f32 tensor split over the
/// ranks: on every rank a local sum of [1, n] and an all_reduce of [n].
/// `collective` false sums [1, ranks n] split over its columns instead:
/// the same local kernel without the all_reduce, so the difference of the
/// two times is the collective's. (Timing the pair alone would count the
/// reduction, parc's generic cpu kernel, as link time.)
static std::string reduceModel(int64_t ranks, int64_t n, int64_t count,
                               bool collective) {
  std::string input =
      llvm::formatv("tensor<{0}x{1}xf32>", collective ? ranks : 1,
                    collective ? n : ranks * n)
          .str();
  std::string output =
      llvm::formatv("tensor<{0}xf32>", collective ? n : ranks * n).str();
  std::string sharding =
      collective ? kSplit.str()
                 : "dist.sharding = #dist.sharding<@mesh, [[], [dp]]>";
  std::string outputSharding =
      collective ? "" : ", dist.sharding = #dist.sharding<@mesh, [[dp]]>";
  std::string results, body, values, types;
  for (int64_t i = 0; i < count; ++i) {
    results += llvm::formatv("{0}{1} {{parc.name = \"y{2}\"{3}}", i ? ", " : "",
                             output, i, outputSharding);
    body += llvm::formatv("  %y{0} = parc.reduce_sum %x [0] : {1} -> {2}\n",
                          i, input, output);
    values += llvm::formatv("{0}%y{1}", i ? ", " : "", i);
    types += (i ? ", " : "") + output;
  }
  return meshOp(ranks) +
         llvm::formatv("func.func @forward(%x: {0} {{parc.name = \"x\", "
                       "parc.role = \"input\", {1}}) -> ({2}) {{\n{3}  return "
                       "{4} : {5}\n}\n",
                       input, sharding, results, body, values, types)
             .str();
}

llvm::Expected<double> Calibrator::measure(const Benchmark &benchmark,
                                           StringRef plan) {
  SmallString<128> model(directory), out(directory), planPath(directory);
  llvm::sys::path::append(model, benchmark.name + ".mlir");
  llvm::sys::path::append(out, benchmark.name);
  llvm::sys::path::append(planPath, benchmark.name + ".json");
  for (auto [path, text] : {std::pair{StringRef(model), StringRef(benchmark.mlir)},
                            std::pair{StringRef(planPath), plan}}) {
    if (text.empty())
      continue;
    std::error_code code;
    llvm::raw_fd_ostream file(path, code);
    if (code)
      return fail("cannot write " + path + ": " + code.message());
    file << text;
  }
  SmallVector<StringRef> compile = {options.compiler, model, "-o", out};
  if (!plan.empty())
    compile.append({"--plan", planPath});
  SmallString<128> compileLog(directory), runLog(directory);
  llvm::sys::path::append(compileLog, benchmark.name + ".compile.log");
  llvm::sys::path::append(runLog, benchmark.name + ".run.log");
  std::optional<StringRef> compileRedirects[] = {std::nullopt,
                                                 StringRef(compileLog),
                                                 StringRef(compileLog)};
  int status = llvm::sys::ExecuteAndWait(options.compiler, compile,
                                         std::nullopt, compileRedirects);
  if (status != 0) {
    auto text = llvm::MemoryBuffer::getFile(compileLog);
    return fail("parc-compile failed on the " + benchmark.name +
                " benchmark: " +
                (text ? (*text)->getBuffer().trim() : StringRef("no log")));
  }
  SmallString<128> program(out);
  llvm::sys::path::append(program, "program");
  std::string ranks = std::to_string(options.ranks);
  std::optional<StringRef> runRedirects[] = {std::nullopt, StringRef(runLog),
                                             StringRef(runLog)};
  auto runSteps = [&](int64_t count) -> llvm::Expected<double> {
    std::string steps = std::to_string(count);
    int runStatus = llvm::sys::ExecuteAndWait(
        mpirun,
        {mpirun, "-np", ranks, "--bind-to", "none", program, "--steps", steps},
        std::nullopt, runRedirects);
    auto text = llvm::MemoryBuffer::getFile(runLog);
    if (runStatus != 0 || !text)
      return fail(
          "the " + benchmark.name + " benchmark failed under mpirun: " +
          (text ? (*text)->getBuffer().trim() : StringRef("no output")));
    for (StringRef line : llvm::split((*text)->getBuffer(), '\n')) {
      double seconds;
      if (line.consume_front("step time: ") &&
          !line.split(' ').first.getAsDouble(seconds))
        return seconds;
    }
    return fail("the " + benchmark.name + " benchmark printed no step time");
  };
  llvm::Expected<double> first = runSteps(options.steps);
  if (!first || *first * (options.steps - 1) >= options.minimumSeconds)
    return first;
  // Enough steps for the timed ones to last minimumSeconds (at most 100000).
  int64_t steps = 1 + static_cast<int64_t>(std::ceil(options.minimumSeconds /
                                                     std::max(*first, 1e-6)));
  return runSteps(std::min<int64_t>(steps, 100000));
}

llvm::Expected<ClusterSpec> Calibrator::run() {
  llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("mpirun");
  if (!found)
    return fail("--calibrate runs its measurements under MPI, and there is "
                "no mpirun on PATH (Debian: apt-get install openmpi-bin)");
  mpirun = *found;
  if (!llvm::sys::fs::can_execute(options.compiler))
    return fail("--calibrate needs parc-compile next to parc-plan; not "
                "found at " + options.compiler);
  if (std::error_code code = llvm::sys::fs::createUniqueDirectory(
          "parc-calibrate", directory))
    return fail("cannot make a temporary directory: " + code.message());
  auto cleanup = llvm::make_scope_exit(
      [&] { llvm::sys::fs::remove_directories(directory); });
  // One core per rank, as the plans run; Open MPI as root and with more
  // ranks than cores when that is what the machine is.
  setenv("OMP_NUM_THREADS", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);

  ClusterSpec cluster;
  cluster.name = "calibrated";
  cluster.devicesPerNode = options.ranks;
  cluster.nodes = 1;
  // The cpu backend's MPI collectives block the rank.
  cluster.overlapsCommunication = false;

  // GEMMs on every rank at once, chained so that a step is long enough for
  // the step timer's microseconds.
  std::vector<std::pair<double, double>> gemmRates;
  for (auto [n, count] : {std::pair<int64_t, int64_t>{32, 256}, {64, 64},
                          {128, 16}, {256, 8}, {512, 2}, {768, 1}}) {
    llvm::Expected<double> seconds = measure(
        {"gemm" + std::to_string(n), gemmModel(options.ranks, n, count)});
    if (!seconds)
      return seconds.takeError();
    double flops = 2.0 * n * n * n;
    double perGemm = *seconds / count;
    gemmRates.push_back({flops, flops / perGemm});
    log << llvm::formatv("calibrate: gemm {0}^3: {1:f4} ms, {2:f2} GFLOP/s "
                         "per rank\n",
                         n, perGemm * 1e3, flops / perGemm / 1e9);
  }
  double peak = 0;
  for (auto [flops, rate] : gemmRates)
    peak = std::max(peak, rate);
  cluster.peakFlops = {{"f32", peak}};
  for (auto [flops, rate] : gemmRates)
    cluster.efficiency.gemm.push_back({flops, std::max(1e-3, rate / peak)});

  // The fixed cost of a kernel: 1024 chained adds of one element.
  llvm::Expected<double> tiny =
      measure({"latency", addChainModel(options.ranks, 1, 1024)});
  if (!tiny)
    return tiny.takeError();
  cluster.kernelLatency = *tiny / 1024;
  log << llvm::formatv("calibrate: kernel latency {0:f2} us\n",
                       cluster.kernelLatency * 1e6);

  // Bandwidth-bound: adds over 4M floats (two reads and a write each).
  int64_t elements = int64_t(1) << 22;
  llvm::Expected<double> stream =
      measure({"stream", addChainModel(options.ranks, elements, 8)});
  if (!stream)
    return stream.takeError();
  double perAdd = std::max(1e-9, *stream / 8 - cluster.kernelLatency);
  cluster.hbmBandwidth = 3.0 * 4 * elements / perAdd;
  log << llvm::formatv("calibrate: elementwise {0:f2} GB/s per rank\n",
                       cluster.hbmBandwidth / 1e9);

  // Fused attention: its own rate (parc's cpu kernel is scalar code), in
  // the FLOPs the ops count (FlopCountOpInterface).
  {
    constexpr int64_t seq = 128, count = 4;
    std::string model = attentionModel(options.ranks, seq, count);
    double flops = countFlops(model) / options.ranks;
    if (flops <= 0)
      return fail("cannot count the attention benchmark's FLOPs");
    llvm::Expected<double> seconds = measure({"attention", model});
    if (!seconds)
      return seconds.takeError();
    cluster.attentionFlops = flops / *seconds;
    log << llvm::formatv("calibrate: attention {0:f2} GFLOP/s per rank\n",
                         *cluster.attentionFlops / 1e9);
  }

  // all_reduce: latency from a small message, bandwidth from a large one,
  // each the time of the collective alone.
  LinkSpec link;
  if (options.ranks > 1) {
    int64_t r = options.ranks;
    auto allReduceSeconds = [&](StringRef name, int64_t n,
                                int64_t count) -> llvm::Expected<double> {
      llvm::Expected<double> total =
          measure({name.str(), reduceModel(r, n, count, true)});
      if (!total)
        return total.takeError();
      llvm::Expected<double> local =
          measure({name.str() + "-local", reduceModel(r, n, count, false)});
      if (!local)
        return local.takeError();
      return std::max(0.0, *total - *local) / count;
    };
    // 64 small ones for the latency, 4 of 16 MB for the bandwidth.
    llvm::Expected<double> small = allReduceSeconds("allreduce-small", 16, 64);
    if (!small)
      return small.takeError();
    int64_t large = int64_t(1) << 22;
    llvm::Expected<double> big = allReduceSeconds("allreduce-large", large, 4);
    if (!big)
      return big.takeError();
    link.latency = std::max(1e-9, *small / (2 * (r - 1)));
    double traffic = 2.0 * (r - 1) / r * 4 * large;
    link.bandwidth =
        traffic / std::max(1e-9, *big - 2 * (r - 1) * link.latency);
    log << llvm::formatv("calibrate: all_reduce latency {0:f2} us, bus "
                         "bandwidth {1:f2} GB/s\n",
                         link.latency * 1e6, link.bandwidth / 1e9);
  } else {
    // One rank has no link to measure; the planner never uses it.
    link = {cluster.hbmBandwidth, cluster.kernelLatency};
  }
  cluster.intraNode = link;
  cluster.interNode = link;
  cluster.efficiency.collective = 1;

  if (llvm::Error error = fitReferenceSteps(cluster))
    return std::move(error);

  // Device memory: the machine's, shared by the ranks.
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  cluster.memoryBytes = pages > 0 && pageSize > 0
                            ? double(pages) * pageSize / options.ranks
                            : 1e9;
  cluster.measuredBy = llvm::formatv("parc-plan --calibrate on {0} ranks "
                                     "(cpu backend; one machine, so intra- "
                                     "and inter-node links are the same "
                                     "measurement)",
                                     options.ranks)
                           .str();
  return cluster;
}

// The add kernel runs at the machine's bandwidth, but a train step's other
// bandwidth-bound kernels (norms, activations, attention, their gradients,
// the optimizer) may not: the efficiency they reach is fitted so that the
// cost model reproduces one measured train step of a small reference GPT
// (2 layers, hidden 128, 4 heads, seq 64, vocab 512, data parallel over the
// ranks). Then the same step tensor parallel over the ranks (when they
// divide the heads), whose blocking collectives each wait for the slower
// partner, gives the collective wait. The models planned later are others;
// docs/planner.md says so.
llvm::Error Calibrator::fitReferenceSteps(ClusterSpec &cluster) {
  DialectRegistry registry;
  registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  ModelConfig config;
  config.layers = 2;
  config.hidden = 128;
  config.heads = 4;
  config.seq = 64;
  config.vocab = 512;
  config.batch = 4 * options.ranks;
  OwningOpRef<ModuleOp> model = buildModel(&context, config);
  OwningOpRef<ModuleOp> step = cast<ModuleOp>((*model)->clone());
  PassManager pm(&context);
  pm.addNestedPass<func::FuncOp>(createMakeTrainStepPass());
  if (failed(pm.run(*step)))
    return fail("cannot build the reference train step");
  std::string text;
  llvm::raw_string_ostream os(text);
  step->print(os);

  func::FuncOp forward = findModelFunction(*model);
  FailureOr<ModelGraph> graph = ModelGraph::build(forward);
  if (failed(graph))
    return fail("cannot analyze the reference model");
  SearchOptions search;
  search.gpus = options.ranks;
  search.globalBatch = config.batch;
  search.dtype = "f32";
  search.memoryLimit = 1e18;
  search.fixed.pp = 1;
  search.fixed.zero = 0;
  search.fixed.recompute = Recompute::None;
  search.fixed.sequenceParallel = false;
  // The best plan of the reference at tp (dp the other ranks) as the cost
  // model prices it with the cluster as it stands, and (`withPlan`) its
  // plan file.
  struct Priced {
    double stepTime;
    std::string plan;
  };
  auto price = [&](int64_t tp, bool withPlan) -> llvm::Expected<Priced> {
    search.fixed.dp = options.ranks / tp;
    search.fixed.tp = tp;
    search.fixed.microBatch = config.batch / (options.ranks / tp);
    CostModel costs(cluster, "f32");
    StrategyIlp ilp(*graph, costs);
    std::string error;
    FailureOr<SearchResult> result =
        searchPlans(*graph, costs, ilp, search, error);
    if (failed(result) || result->plans.empty())
      return fail("cannot price the reference train step at tp = " +
                  std::to_string(tp) + ": " + error);
    // The plan refers to the search's strategies: written while they live.
    ReportContext report;
    report.options = &search;
    const EvaluatedPlan &best = result->plans.front();
    return Priced{best.stepTime,
                  withPlan ? writePlan(buildPlan(best, *graph, report))
                           : std::string()};
  };
  auto predict = [&](int64_t tp) -> llvm::Expected<double> {
    llvm::Expected<Priced> priced = price(tp, /*withPlan=*/false);
    if (!priced)
      return priced.takeError();
    return priced->stepTime;
  };

  std::string dataParallel = llvm::formatv(
      "{{\"mesh\": {{\"dp\": {0}}, \"shardings\": {{\"input_ids\": "
      "[[\"dp\"], []], \"labels\": [[\"dp\"], []]}}",
      options.ranks);
  llvm::Expected<double> measured = measure({"reference", text}, dataParallel);
  if (!measured)
    return measured.takeError();
  // The predicted time falls as the efficiency rises: bisect in log space.
  double low = 1e-3, high = 1;
  cluster.efficiency.memoryBound = high;
  llvm::Expected<double> fastest = predict(1);
  if (!fastest)
    return fastest.takeError();
  if (*fastest < *measured) {
    for (int i = 0; i < 30; ++i) {
      double middle = std::sqrt(low * high);
      cluster.efficiency.memoryBound = middle;
      llvm::Expected<double> time = predict(1);
      if (!time)
        return time.takeError();
      (*time > *measured ? low : high) = middle;
    }
  }
  cluster.efficiency.memoryBound = high;
  log << llvm::formatv("calibrate: reference train step {0:f2} ms; "
                       "bandwidth-bound kernels reach {1:f3} of the add's "
                       "bandwidth\n",
                       *measured * 1e3, cluster.efficiency.memoryBound);

  if (options.ranks == 1 || config.heads % options.ranks != 0) {
    log << "calibrate: no tensor-parallel reference on " << options.ranks
        << " ranks (they must divide its 4 heads); collective wait 0\n";
    return llvm::Error::success();
  }
  llvm::Expected<Priced> tensorParallel =
      price(options.ranks, /*withPlan=*/true);
  if (!tensorParallel)
    return tensorParallel.takeError();
  double base = tensorParallel->stepTime;
  llvm::Expected<double> measuredTp =
      measure({"reference-tp", text}, tensorParallel->plan);
  if (!measuredTp)
    return measuredTp.takeError();
  // The predicted time grows linearly with the wait, once per priced
  // collective.
  constexpr double kProbe = 1e-3;
  cluster.collectiveWait = kProbe;
  llvm::Expected<double> probed = predict(options.ranks);
  if (!probed)
    return probed.takeError();
  double perSecond = (*probed - base) / kProbe;
  cluster.collectiveWait =
      perSecond > 0 ? std::max(0.0, (*measuredTp - base) / perSecond) : 0;
  log << llvm::formatv("calibrate: tensor-parallel reference step {0:f2} ms "
                       "(predicted {1:f2} ms without waiting): each blocking "
                       "collective waits {2:f2} us\n",
                       *measuredTp * 1e3, base * 1e3,
                       cluster.collectiveWait * 1e6);
  return llvm::Error::success();
}

llvm::Expected<ClusterSpec>
mlir::parc::calibrate(const CalibrationOptions &options,
                      llvm::raw_ostream &log) {
  return Calibrator(options, log).run();
}
