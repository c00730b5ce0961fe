//===- Search.cpp - the search over parallel plans ------------------------===//

#include "parc/Plan/Search.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::parc;
using dist::CollectiveKind;

std::string EvaluatedPlan::describe() const {
  std::string text = llvm::formatv("dp={0} tp={1} pp={2} mb={3} zero={4} "
                                   "recompute={5} sp={6}",
                                   dp, tp, pp, microBatch, zero,
                                   getRecomputeName(recompute),
                                   sequenceParallel ? "on" : "off");
  if (schedule)
    text += " schedule=" + getPipelineScheduleName(*schedule).str();
  if (virtualStages > 1)
    text += " v=" + std::to_string(virtualStages);
  return text;
}

/// The divisors of `n` in increasing order.
static std::vector<int64_t> getDivisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d * d != n)
        large.insert(large.begin(), n / d);
    }
  small.insert(small.end(), large.begin(), large.end());
  return small;
}

/// Bytes in the largest binary unit that keeps the figure above 1.
std::string mlir::parc::formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && std::abs(bytes) >= 1024) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:f2} {1}", bytes, units[unit]).str();
}

namespace {

/// Per-layer figures of one strategy solution and recomputation choice.
struct LayerFigures {
  std::vector<double> time;       // per micro-batch, forward+backward+comm
  std::vector<double> recompute;  // extra forward time
  std::vector<double> activation; // bytes kept per micro-batch
  std::vector<double> temporary;  // bytes alive while the layer runs
  std::vector<double> parameters;
  std::vector<double> output;
};

class Searcher {
public:
  Searcher(const ModelGraph &graph, const CostModel &costs, StrategyIlp &ilp,
           const SearchOptions &options)
      : graph(graph), costs(costs), ilp(ilp), options(options) {}

  SearchResult run();

private:
  void evaluate(int64_t dp, int64_t tp, int64_t pp, int64_t microBatch,
                bool sp);
  LayerFigures getLayerFigures(const StrategySolution &solution,
                               Recompute recompute) const;
  /// Splits the layers into `chunks` contiguous ranges minimizing the
  /// slowest, the part before the layers on the first and after on the
  /// last; layers per chunk.
  std::vector<int64_t> partition(const std::vector<double> &layerTime,
                                 double pre, double post,
                                 int64_t chunks) const;
  template <typename T>
  std::vector<T> choices(const std::optional<T> &fixed, bool searched,
                         std::vector<T> all, T simplest) const {
    if (fixed)
      return {*fixed};
    if (!searched)
      return {simplest};
    return all;
  }
  void reject(std::string configuration, std::string reason) {
    if (seenRejections.insert(configuration + "\n" + reason).second)
      result.rejected.push_back({std::move(configuration), std::move(reason)});
  }

  const ModelGraph &graph;
  const CostModel &costs;
  StrategyIlp &ilp;
  const SearchOptions &options;
  SearchResult result;
  std::set<std::string> seenRejections;
};

} // namespace

LayerFigures Searcher::getLayerFigures(const StrategySolution &solution,
                                       Recompute recompute) const {
  LayerFigures figures;
  for (int64_t layerClass : graph.getLayerClasses()) {
    const SegmentCost &cost =
        solution.segments.at({Segment::Layer, layerClass});
    double forward = cost.forwardTime;
    double extra = 0, kept = cost.activationBytes, temporary = 0;
    if (recompute == Recompute::Full) {
      // The forward pass runs again, its collectives included.
      extra = forward + cost.forwardCommunicationTime;
      kept = cost.outputBytes;
      temporary = cost.activationBytes;
    } else if (recompute == Recompute::Selective) {
      extra = cost.parameterFreeForwardTime;
      kept = cost.selectiveActivationBytes + cost.outputBytes;
      temporary = cost.activationBytes - cost.selectiveActivationBytes;
    }
    figures.time.push_back(forward + cost.backwardTime +
                           cost.communicationTime);
    figures.recompute.push_back(extra);
    figures.activation.push_back(kept);
    figures.temporary.push_back(temporary);
    figures.parameters.push_back(cost.parameters);
    figures.output.push_back(cost.outputBytes);
  }
  return figures;
}

std::vector<int64_t> Searcher::partition(const std::vector<double> &layerTime,
                                         double pre, double post,
                                         int64_t chunks) const {
  int64_t layers = layerTime.size();
  if (layers == 0)
    return std::vector<int64_t>(chunks, 0);
  std::vector<double> prefix(layers + 1, 0);
  for (int64_t i = 0; i < layers; ++i)
    prefix[i + 1] = prefix[i] + layerTime[i];
  auto rangeTime = [&](int64_t from, int64_t to) {
    return prefix[to] - prefix[from] + (from == 0 ? pre : 0) +
           (to == layers ? post : 0);
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[c][j]: the slowest chunk when the first j layers form c chunks.
  std::vector<std::vector<double>> best(
      chunks + 1, std::vector<double>(layers + 1, inf));
  std::vector<std::vector<int64_t>> split(
      chunks + 1, std::vector<int64_t>(layers + 1, 0));
  best[0][0] = 0;
  for (int64_t c = 1; c <= chunks; ++c)
    for (int64_t j = c; j <= layers - (chunks - c); ++j)
      for (int64_t i = c - 1; i < j; ++i) {
        double slowest = std::max(best[c - 1][i], rangeTime(i, j));
        if (slowest < best[c][j]) {
          best[c][j] = slowest;
          split[c][j] = i;
        }
      }
  std::vector<int64_t> sizes(chunks);
  int64_t end = layers;
  for (int64_t c = chunks; c >= 1; --c) {
    int64_t begin = split[c][end];
    sizes[c - 1] = end - begin;
    end = begin;
  }
  return sizes;
}

void Searcher::evaluate(int64_t dp, int64_t tp, int64_t pp, int64_t microBatch,
                        bool sp) {
  std::string mesh = llvm::formatv("dp={0} tp={1} pp={2} mb={3} sp={4}", dp,
                                   tp, pp, microBatch, sp ? "on" : "off");
  const StrategySolution &solution = ilp.solve({tp, microBatch, sp});
  result.ilpSolves = ilp.getNumSolved();
  if (!solution.feasible)
    return reject(mesh, "the strategy ILP found no consistent sharding");
  // A tp that most of the FLOPs cannot be split over contradicts the model
  // (heads or widths it does not divide).
  if (tp > 1 && solution.unsplitFlopShare > 0.5)
    return reject(mesh, llvm::formatv("tp={0} cannot split {1:f0}% of the "
                                      "FLOPs; the largest op it cannot split "
                                      "is {2} ({3:f0}%): its sizes are not "
                                      "divisible by {0}",
                                      tp, 100 * solution.unsplitFlopShare,
                                      solution.unsplitOp,
                                      100 * solution.unsplitOpFlopShare));
  // A tensor axis over which the ILP splits little is GPUs doing the same
  // work twice: communication costs more than splitting saves at this size.
  if (tp > 1 && solution.splitFlopShare < 0.5 && !options.fixed.tp)
    return reject(mesh, llvm::formatv("tp={0} would leave {1:f0}% of the "
                                      "FLOPs replicated: splitting them costs "
                                      "more communication than it saves",
                                      tp, 100 * (1 - solution.splitFlopShare)));
  if (sp && !solution.usesSequenceParallel && tp > 1 &&
      !options.fixed.sequenceParallel)
    return; // the same plan as sp=off
  int64_t microbatches = options.globalBatch / (dp * microBatch);
  bool mixed = options.dtype == "bf16";
  const SegmentCost &pre = solution.segments.count({Segment::Pre})
                               ? solution.segments.at({Segment::Pre})
                               : SegmentCost();
  const SegmentCost &post = solution.segments.count({Segment::Post})
                                ? solution.segments.at({Segment::Post})
                                : SegmentCost();
  GroupPlacement tpGroup{tp, 1}, dpGroup{dp, tp}, ppGroup{pp, tp * dp};
  double peakFlops = costs.getPeakFlops();

  for (Recompute recompute :
       choices<Recompute>(options.fixed.recompute, options.space.recompute,
                          {Recompute::None, Recompute::Selective,
                           Recompute::Full},
                          Recompute::None)) {
    LayerFigures layers = getLayerFigures(solution, recompute);
    std::vector<double> layerTime(layers.time.size());
    for (size_t i = 0; i < layerTime.size(); ++i)
      layerTime[i] = layers.time[i] + layers.recompute[i];
    double preTime = pre.forwardTime + pre.backwardTime + pre.communicationTime;
    double postTime =
        post.forwardTime + post.backwardTime + post.communicationTime;

    std::vector<std::optional<PipelineSchedule>> schedules = {std::nullopt};
    if (pp > 1) {
      schedules.clear();
      if (options.fixed.schedule)
        schedules.push_back(*options.fixed.schedule);
      else
        for (PipelineSchedule schedule :
             {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe,
              PipelineSchedule::Interleaved1F1B,
              PipelineSchedule::ZeroBubbleH1})
          schedules.push_back(schedule);
    }
    for (std::optional<PipelineSchedule> schedule : schedules) {
      std::vector<int64_t> virtuals = {1};
      if (schedule == PipelineSchedule::Interleaved1F1B)
        virtuals = options.fixed.virtualStages
                       ? std::vector<int64_t>{*options.fixed.virtualStages}
                       : std::vector<int64_t>{2, 4};
      for (int64_t v : virtuals) {
        int64_t chunks = pp * v;
        if (chunks > 1 && chunks > graph.getNumLayers()) {
          reject(mesh + " v=" + std::to_string(v),
                 llvm::formatv("{0} pipeline chunks but only {1} layers",
                               chunks, graph.getNumLayers()));
          continue;
        }
        std::vector<int64_t> sizes =
            partition(layerTime, preTime, postTime, chunks);
        // Per stage: time per micro-batch and what it holds.
        std::vector<double> stageTime(pp, 0), stageRecompute(pp, 0),
            stageParameters(pp, 0), stageActivations(pp, 0),
            stageTemporary(pp, 0), stageBoundary(pp, 0);
        int64_t layer = 0;
        for (int64_t c = 0; c < chunks; ++c) {
          int64_t stage = c % pp;
          for (int64_t i = 0; i < sizes[c]; ++i, ++layer) {
            stageTime[stage] += layers.time[layer];
            stageRecompute[stage] += layers.recompute[layer];
            stageParameters[stage] += layers.parameters[layer];
            stageActivations[stage] += layers.activation[layer];
            stageTemporary[stage] =
                std::max(stageTemporary[stage], layers.temporary[layer]);
            stageBoundary[stage] =
                std::max(stageBoundary[stage], layers.output[layer]);
          }
        }
        stageTime[0] += preTime;
        stageTime[pp - 1] += postTime;
        stageParameters[0] += pre.parameters;
        stageParameters[pp - 1] += post.parameters;
        if (pp > 1)
          stageParameters[pp - 1] += post.sharedParameters;
        // Point-to-point: each chunk boundary sends the activation forward
        // and its gradient back, once per micro-batch.
        double p2p = 0;
        if (pp > 1)
          for (int64_t s = 0; s < pp; ++s)
            p2p = std::max(p2p, 2 * v *
                                    costs.getPointToPointTime(
                                        stageBoundary[s], ppGroup));
        double slowest = 0;
        int64_t slowestStage = 0;
        for (int64_t s = 0; s < pp; ++s)
          if (stageTime[s] + stageRecompute[s] > slowest) {
            slowest = stageTime[s] + stageRecompute[s];
            slowestStage = s;
          }
        double perMicrobatch = slowest + p2p;
        double bubble = schedule ? getBubbleFraction(*schedule, pp,
                                                     microbatches, v)
                                 : 0;

        for (int64_t zero : choices<int64_t>(options.fixed.zero,
                                             options.space.zero && dp > 1,
                                             {0, 1, 2, 3}, 0)) {
          EvaluatedPlan plan;
          plan.dp = dp;
          plan.tp = tp;
          plan.pp = pp;
          plan.microBatch = microBatch;
          plan.microbatches = microbatches;
          plan.zero = zero;
          plan.virtualStages = v;
          plan.sequenceParallel = solution.usesSequenceParallel;
          plan.recompute = recompute;
          plan.schedule = schedule;
          plan.strategy = &solution;
          for (int64_t s = 0; s < pp; ++s)
            plan.stageMicrobatchTime.push_back(stageTime[s] +
                                               stageRecompute[s]);
          plan.pointToPointTime = p2p;
          for (int64_t s = 0; s < pp; ++s) {
            int64_t total = 0;
            for (int64_t c = s; c < chunks; c += pp)
              total += sizes[c];
            plan.layersPerStage.push_back(total);
          }
          // Time on the slowest stage; the tensor-parallel share of it is
          // reported apart.
          // A model without repeated layers is all "before the layers".
          const SegmentCost &slowCost =
              graph.getNumLayers() > 0
                  ? solution.segments.at(
                        {Segment::Layer, graph.getLayerClasses()[0]})
                  : pre;
          double layerShare =
              slowCost.communicationTime /
              std::max(1e-30, slowCost.forwardTime + slowCost.backwardTime +
                                  slowCost.communicationTime);
          double computeAndComm = microbatches * stageTime[slowestStage];
          plan.time.tensorParallelComm = computeAndComm * layerShare;
          plan.time.compute = computeAndComm - plan.time.tensorParallelComm;
          plan.time.recompute = microbatches * stageRecompute[slowestStage];
          plan.time.pipelineComm = microbatches * p2p;
          plan.time.bubble = bubble * microbatches * perMicrobatch;

          // Data parallelism: gradients reduced once per step (ZeRO 1-2:
          // reduce_scatter + all_gather of the parameters, the same bytes);
          // ZeRO-3 gathers the parameters for every micro-batch's forward
          // and backward pass and reduce-scatters each gradient.
          double stageParams = stageParameters[slowestStage];
          double gradientBytes = stageParams * (mixed ? 2 : 4);
          double dpTime = 0, dpBytes = 0;
          if (dp > 1) {
            if (zero < 3) {
              dpTime = zero == 0 ? costs.getCollectiveTime(
                                       CollectiveKind::AllReduce, gradientBytes,
                                       dpGroup)
                                 : costs.getCollectiveTime(
                                       CollectiveKind::ReduceScatter,
                                       gradientBytes, dpGroup) +
                                       costs.getCollectiveTime(
                                           CollectiveKind::AllGather,
                                           gradientBytes, dpGroup);
              dpBytes = dist::getRingTrafficBytes(
                  CollectiveKind::AllReduce, int64_t(gradientBytes), dp);
            } else {
              double perMicrobatchTime =
                  2 * costs.getCollectiveTime(CollectiveKind::AllGather,
                                              gradientBytes, dpGroup) +
                  costs.getCollectiveTime(CollectiveKind::ReduceScatter,
                                          gradientBytes, dpGroup);
              // Prefetching hides the gathers behind the layers' compute.
              dpTime = microbatches *
                       std::max(0.0, perMicrobatchTime - stageTime[slowestStage]);
              dpBytes = microbatches * 1.5 *
                        dist::getRingTrafficBytes(CollectiveKind::AllReduce,
                                                  int64_t(gradientBytes), dp);
            }
            if (options.overlapGradientReduction && zero < 3) {
              double lastBackward = stageTime[slowestStage] * 2.0 / 3.0;
              dpTime = std::max(0.0, dpTime - lastBackward);
            }
          }
          plan.time.dataParallelComm = dpTime;
          ModelStateBytes state =
              getModelStateBytes(stageParams, mixed, zero, dp);
          // The optimizer reads and writes its state, the parameters and
          // the gradients once.
          plan.time.optimizer = costs.getKernelTime(
              10 * stageParams / std::max<int64_t>(1, zero >= 1 ? dp : 1),
              2 * state.total());
          plan.stepTime = plan.time.total();
          plan.bubbleFraction = bubble;
          double edgeBytes = (slowestStage == 0 ? pre.communicationBytes : 0) +
                             (slowestStage == pp - 1 ? post.communicationBytes
                                                     : 0);
          plan.commBytesPerRank =
              dpBytes + microbatches * (slowCost.communicationBytes *
                                            plan.layersPerStage[slowestStage] +
                                        edgeBytes);

          // Memory: the stage with the largest total.
          double peak = -1;
          for (int64_t s = 0; s < pp; ++s) {
            ModelStateBytes stageState =
                getModelStateBytes(stageParameters[s], mixed, zero, dp);
            double inFlight =
                schedule ? getInFlightMicrobatches(*schedule, pp, microbatches,
                                                   v) *
                               (pp > 1 ? double(pp - s) / pp : 1.0)
                         : 1.0;
            if (schedule == PipelineSchedule::GPipe)
              inFlight = microbatches;
            MemoryBreakdown memory;
            memory.parameters = stageState.parameters;
            memory.gradients = stageState.gradients;
            memory.optimizerState = stageState.optimizerState;
            double edges = (s == 0 ? pre.activationBytes : 0) +
                           (s == pp - 1 ? post.activationBytes : 0);
            memory.activations = inFlight * (stageActivations[s] + edges);
            // The largest op of the training graph holds its operands and
            // results at once.
            memory.temporaries =
                stageTemporary[s] +
                std::max({pre.largestOpBytes, post.largestOpBytes,
                          slowCost.largestOpBytes});
            if (zero >= 3)
              memory.temporaries += 2 * gradientBytes / std::max<int64_t>(
                                                            1, plan.layersPerStage[s]);
            if (memory.total() > peak) {
              peak = memory.total();
              plan.memory = memory;
              plan.peakStage = s;
            }
          }

          // Megatron's counting: 3 forward passes' worth of FLOPs (4 with
          // full recomputation) over the global batch.
          double modelFlops = double(graph.getForwardFlops()) *
                              options.globalBatch / graph.getBatch();
          double hardwareFlops =
              modelFlops * (recompute == Recompute::Full ? 4 : 3);
          plan.tflopsPerGpu =
              hardwareFlops / (plan.stepTime * options.gpus) / 1e12;
          plan.mfu = 3 * modelFlops / (plan.stepTime * options.gpus * peakFlops);

          plan.buildable = false;
          if (pp > 1)
            plan.notBuildable = "pipeline parallelism (issue 10)";
          else if (zero > 1)
            plan.notBuildable = "ZeRO-" + std::to_string(zero) + " (issue 11)";
          else if (recompute != Recompute::None)
            plan.notBuildable = "recomputation (issue 11)";
          else if (mixed)
            plan.notBuildable = "bf16 mixed precision (issue 11)";
          else if (microbatches > 1)
            plan.notBuildable = "gradient accumulation over micro-batches "
                                "(issue 10)";
          else if (options.globalBatch != graph.getBatch())
            plan.notBuildable = "the model's batch is " +
                                std::to_string(graph.getBatch()) +
                                ", not the global batch (regenerate it with "
                                "--batch " +
                                std::to_string(options.globalBatch) + ")";
          else
            plan.buildable = true;
          // parc's executables keep each next-step parameter and optimizer
          // state as a result of its own until donation lands (issue 11).
          if (plan.buildable)
            plan.memory.nextStepCopies =
                plan.memory.parameters + plan.memory.optimizerState;

          ++result.evaluated;
          double total = plan.memory.total();
          if (result.smallestMemory == 0 || total < result.smallestMemory) {
            result.smallestMemory = total;
            std::pair<double, std::string> terms[] = {
                {plan.memory.parameters, "parameters"},
                {plan.memory.gradients, "gradients"},
                {plan.memory.optimizerState, "optimizer state"},
                {plan.memory.activations, "activations"},
                {plan.memory.temporaries, "temporaries"}};
            result.smallestMemoryTerm =
                std::max_element(std::begin(terms), std::end(terms))->second;
          }
          if (total > options.memoryLimit) {
            reject(plan.describe(),
                   llvm::formatv("out of memory on stage {0}: needs {1}, "
                                 "{2} over the {3} limit ({4} {5})",
                                 plan.peakStage, formatBytes(total),
                                 formatBytes(total - options.memoryLimit),
                                 formatBytes(options.memoryLimit),
                                 formatBytes(plan.memory.activations),
                                 "of activations"));
            continue;
          }
          result.plans.push_back(std::move(plan));
        }
      }
    }
  }
}

SearchResult Searcher::run() {
  int64_t gpus = options.gpus;
  for (int64_t tp : choices<int64_t>(options.fixed.tp, options.space.tp,
                                     getDivisors(gpus), 1)) {
    if (gpus % tp)
      continue;
    for (int64_t pp : choices<int64_t>(options.fixed.pp, options.space.pp,
                                       getDivisors(gpus / tp), 1)) {
      if ((gpus / tp) % pp)
        continue;
      int64_t dp = gpus / (tp * pp);
      if (options.fixed.dp && *options.fixed.dp != dp)
        continue;
      if (!options.space.dp && !options.fixed.dp && dp != 1)
        continue;
      std::string mesh = llvm::formatv("dp={0} tp={1} pp={2}", dp, tp, pp);
      if (pp > 1 && pp > graph.getNumLayers()) {
        reject(mesh, llvm::formatv("{0} pipeline stages but only {1} layers",
                                   pp, graph.getNumLayers()));
        continue;
      }
      if (options.globalBatch % dp) {
        reject(mesh, llvm::formatv("the global batch {0} is not divisible by "
                                   "dp={1}",
                                   options.globalBatch, dp));
        continue;
      }
      int64_t perReplica = options.globalBatch / dp;
      for (int64_t microBatch :
           choices<int64_t>(options.fixed.microBatch, options.space.microBatch,
                            getDivisors(perReplica), perReplica)) {
        if (perReplica % microBatch) {
          reject(mesh, llvm::formatv("micro-batch {0} does not divide the {1} "
                                     "samples of a replica",
                                     microBatch, perReplica));
          continue;
        }
        for (bool sp : choices<bool>(options.fixed.sequenceParallel,
                                     options.space.sp && tp > 1, {false, true},
                                     false))
          evaluate(dp, tp, pp, microBatch, sp);
      }
    }
  }
  // Fastest first; plans within a millionth of each other's time are ties,
  // settled toward the simpler plan (data parallelism before tensor and
  // pipeline parallelism, less ZeRO and recomputation), then less memory.
  std::stable_sort(result.plans.begin(), result.plans.end(),
                   [](const EvaluatedPlan &a, const EvaluatedPlan &b) {
                     double scale = std::max(a.stepTime, b.stepTime);
                     if (std::abs(a.stepTime - b.stepTime) > 1e-6 * scale)
                       return a.stepTime < b.stepTime;
                     auto simplicity = [](const EvaluatedPlan &plan) {
                       return std::make_tuple(plan.pp, plan.tp, plan.zero,
                                              int(plan.recompute),
                                              plan.sequenceParallel);
                     };
                     if (simplicity(a) != simplicity(b))
                       return simplicity(a) < simplicity(b);
                     return a.memory.total() < b.memory.total();
                   });
  return std::move(result);
}

FailureOr<SearchResult> mlir::parc::searchPlans(const ModelGraph &graph,
                                                const CostModel &costs,
                                                StrategyIlp &ilp,
                                                const SearchOptions &options,
                                                std::string &error) {
  const PlanChoice &fixed = options.fixed;
  if (fixed.tp && fixed.pp && fixed.dp &&
      *fixed.tp * *fixed.pp * *fixed.dp != options.gpus) {
    error = llvm::formatv("--fix dp={0},tp={1},pp={2} uses {3} GPUs, not "
                          "--gpus {4}",
                          *fixed.dp, *fixed.tp, *fixed.pp,
                          *fixed.dp * *fixed.tp * *fixed.pp, options.gpus);
    return failure();
  }
  for (auto [name, value] : {std::pair{"tp", fixed.tp}, {"pp", fixed.pp},
                             {"dp", fixed.dp}})
    if (value && (*value < 1 || options.gpus % *value)) {
      error = llvm::formatv("--fix {0}={1} does not divide --gpus {2}", name,
                            *value, options.gpus);
      return failure();
    }
  if (fixed.schedule && fixed.pp && *fixed.pp == 1) {
    error = "--fix schedule=... needs pp > 1";
    return failure();
  }
  return Searcher(graph, costs, ilp, options).run();
}
