//===- Search.cpp - the search over parallel plans ------------------------===//

#include "parc/Plan/Search.h"
#include "parc/IR/ParcInterfaces.h"
#include "parc/Plan/CompileCheck.h"
#include "parc/Transforms/Pipeline.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <variant>

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
  if (sync == DataParallelSync::ParameterServer)
    text += llvm::formatv(" sync=parameter-server({0},{1})",
                          getServerPlacementName(placement), servers);
  if (sync == DataParallelSync::LocalSgd)
    text += " sync=local-sgd(" + std::to_string(syncEvery) + ")";
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
  /// Bytes sent per micro-batch over tp, recomputation's included.
  std::vector<double> communicationBytes;
  /// Time and bytes of invariant values' reshardings, per step, and their
  /// copies.
  std::vector<double> stepCommunicationTime, stepCommunicationBytes,
      parameterCopyBytes;
  std::vector<double> activation; // bytes kept per micro-batch
  std::vector<double> deferredBytes; // held per deferred weight gradient
  std::vector<const SegmentCost *> cost;
  std::vector<double> parameters, parameterReads;
  std::vector<double> output;
};

/// Per pipeline stage (one entry for no pipeline): one micro-batch's
/// forward+backward+tp time and recomputation, what the stage holds, and its
/// layers; the slowest stage; the point-to-point time per micro-batch.
struct StageFigures {
  std::vector<double> time, recompute, parameters, parameterReads, boundary,
      communicationBytes;
  /// Invariant values' reshardings, per step, and their copies
  /// (SegmentCost).
  std::vector<double> stepCommunicationTime, stepCommunicationBytes,
      parameterCopyBytes;
  /// What a micro-batch whose weight gradients wait holds (SegmentCost).
  std::vector<double> deferredBytes;
  /// The parameters each stage updates, and so synchronizes over dp: the
  /// last stage's copy of a tied parameter is the first stage's to update.
  std::vector<double> updatedParameters;
  /// Bytes each stage sends to its neighbours per micro-batch: every chunk's
  /// output forward but the model's last, every chunk's input gradient back
  /// but the model's first.
  std::vector<double> pointToPointBytes;
  std::vector<int64_t> layers;
  /// The stage's layers in model order.
  std::vector<std::vector<int64_t>> layerIndices;
  int64_t slowest = 0;
  double pointToPoint = 0;
};

/// A mesh the search prices: its sizes, micro-batch and sequence
/// parallelism.
struct MeshChoice {
  int64_t dp, tp, pp, microBatch;
  bool sp;
};

class Searcher {
public:
  Searcher(const ModelGraph &graph, const CostModel &costs, StrategyIlp &ilp,
           const SearchOptions &options)
      : graph(graph), costs(costs), ilp(ilp), options(options) {}

  SearchResult run();

private:
  /// The meshes the space and the fixed choices allow, in the search's
  /// order, and those they refuse before any is priced.
  std::vector<std::variant<MeshChoice, RejectedPlan>> enumerateMeshes() const;
  /// Whether `choice` splits the batch into micro-batches that the model
  /// cannot take (findMicrobatchRefusal).
  bool refusesMicrobatches(const MeshChoice &choice) const;
  /// The strategy ILP `choice` is priced with.
  StrategyConfig getStrategyConfig(const MeshChoice &choice) const;
  void evaluate(const MeshChoice &choice);
  /// Rejects a strategy that cannot serve (infeasible, or a tp the model
  /// cannot use); true when it did.
  bool rejectsStrategy(const StrategySolution &solution,
                       const std::string &mesh, int64_t tp);
  StageFigures layOutStages(const LayerFigures &layers, const SegmentCost &pre,
                            const SegmentCost &post, int64_t pp, int64_t v,
                            const std::vector<int64_t> &sizes) const;
  void priceTime(EvaluatedPlan &plan, const StageFigures &stages,
                 const SegmentCost &layerCost, const SegmentCost &pre,
                 const SegmentCost &post) const;
  void priceMemory(EvaluatedPlan &plan, const StageFigures &stages,
                   const LayerFigures &layers, const SegmentCost &pre,
                   const SegmentCost &post) const;
  void checkBuildable(EvaluatedPlan &plan) const;
  /// The data-parallel synchronizations priced on `dp` ranks: the fixed
  /// one, or with `--space sync` the ring all-reduce and parameter servers
  /// colocated and dedicated, one server per rank.
  std::vector<EvaluatedPlan> getSyncChoices(int64_t dp) const;
  /// Why the model cannot be split into micro-batches, if it cannot.
  std::optional<std::string> findMicrobatchRefusal() const;
  /// Keeps `plan` if it fits in memory, else rejects it with the amount.
  void admit(EvaluatedPlan plan);
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
  std::optional<std::string> microbatchRefusal;
};

} // namespace

LayerFigures Searcher::getLayerFigures(const StrategySolution &solution,
                                       Recompute recompute) const {
  LayerFigures figures;
  for (int64_t layerClass : graph.getLayerClasses()) {
    const SegmentCost &cost =
        solution.segments.at({Segment::Layer, layerClass});
    double forward = cost.forwardTime;
    double extra = 0, kept = cost.activationBytes;
    SegmentCost::Recomputed again;
    if (recompute == Recompute::Full) {
      // The forward pass runs again, its collectives included.
      again = cost.fullRecompute;
      extra = forward + again.communicationTime;
      kept = cost.fullActivationBytes;
    } else if (recompute == Recompute::Selective) {
      again = cost.selectiveRecompute;
      extra = cost.parameterFreeForwardTime + again.communicationTime;
      kept = cost.selectiveActivationBytes;
    }
    figures.time.push_back(forward + cost.backwardTime +
                           cost.communicationTime);
    figures.recompute.push_back(extra);
    figures.communicationBytes.push_back(cost.communicationBytes +
                                         again.communicationBytes);
    figures.stepCommunicationTime.push_back(cost.stepCommunicationTime +
                                            again.stepCommunicationTime);
    figures.stepCommunicationBytes.push_back(cost.stepCommunicationBytes +
                                             again.stepCommunicationBytes);
    figures.parameterCopyBytes.push_back(cost.parameterCopyBytes);
    figures.activation.push_back(kept);
    figures.deferredBytes.push_back(cost.deferredBytes);
    figures.cost.push_back(&cost);
    figures.parameters.push_back(cost.parameters);
    figures.parameterReads.push_back(cost.parameterReads +
                                     again.parameterReads);
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

bool Searcher::rejectsStrategy(const StrategySolution &solution,
                               const std::string &mesh, int64_t tp) {
  if (!solution.feasible) {
    reject(mesh, "the strategy ILP found no consistent sharding");
    return true;
  }
  // A tp that most of the FLOPs cannot be split over contradicts the model
  // (heads or widths it does not divide).
  if (tp > 1 && solution.unsplitFlopShare > 0.5) {
    reject(mesh, llvm::formatv("tp={0} cannot split {1:f0}% of the FLOPs; "
                               "the largest op it cannot split is {2} "
                               "({3:f0}%): its sizes are not divisible by {0}",
                               tp, 100 * solution.unsplitFlopShare,
                               solution.unsplitOp,
                               100 * solution.unsplitOpFlopShare));
    return true;
  }
  // A tensor axis over which the ILP splits little is GPUs doing the same
  // work twice: communication costs more than splitting saves at this size.
  if (tp > 1 && solution.splitFlopShare < 0.5 && !options.fixed.tp) {
    reject(mesh, llvm::formatv("tp={0} would leave {1:f0}% of the FLOPs "
                               "replicated: splitting them costs more "
                               "communication than it saves",
                               tp, 100 * (1 - solution.splitFlopShare)));
    return true;
  }
  return false;
}

StageFigures Searcher::layOutStages(const LayerFigures &layers,
                                    const SegmentCost &pre,
                                    const SegmentCost &post, int64_t pp,
                                    int64_t v,
                                    const std::vector<int64_t> &sizes) const {
  StageFigures stages;
  for (auto *figures :
       {&stages.time, &stages.recompute, &stages.parameters,
        &stages.parameterReads, &stages.boundary, &stages.communicationBytes,
        &stages.stepCommunicationTime, &stages.stepCommunicationBytes,
        &stages.parameterCopyBytes, &stages.deferredBytes})
    figures->assign(pp, 0);
  stages.layers.assign(pp, 0);
  stages.layerIndices.resize(pp);
  int64_t layer = 0;
  for (size_t c = 0; c < sizes.size(); ++c) {
    int64_t stage = c % pp;
    stages.layers[stage] += sizes[c];
    for (int64_t i = 0; i < sizes[c]; ++i, ++layer) {
      for (auto [summed, figure] :
           {std::pair{&StageFigures::time, &LayerFigures::time},
            {&StageFigures::recompute, &LayerFigures::recompute},
            {&StageFigures::parameters, &LayerFigures::parameters},
            {&StageFigures::parameterReads, &LayerFigures::parameterReads},
            {&StageFigures::communicationBytes,
             &LayerFigures::communicationBytes},
            {&StageFigures::stepCommunicationTime,
             &LayerFigures::stepCommunicationTime},
            {&StageFigures::stepCommunicationBytes,
             &LayerFigures::stepCommunicationBytes},
            {&StageFigures::parameterCopyBytes,
             &LayerFigures::parameterCopyBytes},
            {&StageFigures::deferredBytes, &LayerFigures::deferredBytes}})
        (stages.*summed)[stage] += (layers.*figure)[layer];
      stages.layerIndices[stage].push_back(layer);
      stages.boundary[stage] =
          std::max(stages.boundary[stage], layers.output[layer]);
    }
  }
  stages.time[0] += pre.forwardTime + pre.backwardTime + pre.communicationTime;
  stages.time[pp - 1] +=
      post.forwardTime + post.backwardTime + post.communicationTime;
  // The first stage holds the part before the layers, the last the part
  // after them.
  for (auto [summed, cost] :
       {std::pair{&StageFigures::communicationBytes,
                  &SegmentCost::communicationBytes},
        {&StageFigures::stepCommunicationTime,
         &SegmentCost::stepCommunicationTime},
        {&StageFigures::stepCommunicationBytes,
         &SegmentCost::stepCommunicationBytes},
        {&StageFigures::parameterCopyBytes, &SegmentCost::parameterCopyBytes},
        {&StageFigures::deferredBytes, &SegmentCost::deferredBytes},
        {&StageFigures::parameters, &SegmentCost::parameters},
        {&StageFigures::parameterReads, &SegmentCost::parameterReads}}) {
    (stages.*summed)[0] += pre.*cost;
    (stages.*summed)[pp - 1] += post.*cost;
  }
  stages.updatedParameters = stages.parameters;
  if (pp > 1)
    stages.parameters[pp - 1] += post.sharedParameters;
  // Point-to-point: each chunk boundary sends the activation forward and its
  // gradient back, once per micro-batch.
  stages.pointToPointBytes.assign(pp, 0);
  if (pp > 1) {
    GroupPlacement ppGroup{pp, options.gpus / pp};
    for (int64_t s = 0; s < pp; ++s) {
      stages.pointToPoint =
          std::max(stages.pointToPoint,
                   2 * v * costs.getPointToPointTime(stages.boundary[s],
                                                     ppGroup));
      stages.pointToPointBytes[s] =
          (2 * v - (s == 0) - (s == pp - 1)) * stages.boundary[s];
    }
  }
  double slowest = 0;
  for (int64_t s = 0; s < pp; ++s)
    if (stages.time[s] + stages.recompute[s] > slowest) {
      slowest = stages.time[s] + stages.recompute[s];
      stages.slowest = s;
    }
  return stages;
}

void Searcher::priceTime(EvaluatedPlan &plan, const StageFigures &stages,
                         const SegmentCost &layerCost, const SegmentCost &pre,
                         const SegmentCost &post) const {
  int64_t dp = plan.dp, zero = plan.zero, m = plan.microbatches;
  int64_t slowest = stages.slowest;
  double stageTime = stages.time[slowest];
  // The slowest stage's time; the tensor-parallel share of it is reported
  // apart.
  double layerShare =
      layerCost.communicationTime /
      std::max(1e-30, layerCost.forwardTime + layerCost.backwardTime +
                          layerCost.communicationTime);
  plan.time.tensorParallelComm = m * stageTime * layerShare;
  plan.time.compute = m * stageTime - plan.time.tensorParallelComm;
  // An invariant value's resharding runs once per step, but under ZeRO-3
  // once per micro-batch: it reshards the copy gathered for each one.
  int64_t reshardings = zero >= 3 ? m : 1;
  plan.time.tensorParallelComm +=
      reshardings * stages.stepCommunicationTime[slowest];
  plan.time.recompute = m * stages.recompute[slowest];
  plan.time.pipelineComm = m * stages.pointToPoint;
  plan.time.bubble =
      plan.bubbleFraction * m * (stageTime + stages.recompute[slowest] +
                                 stages.pointToPoint);

  // Data parallelism: gradients reduced once per step (ZeRO-1:
  // reduce_scatter + all_gather of the parameters, the same bytes); ZeRO-2
  // reduce-scatters every micro-batch's gradients; ZeRO-3 also gathers a
  // parameter for each op of every micro-batch that reads it.
  bool mixed = options.dtype == "bf16";
  // A gradient's or a gathered weight's bytes per parameter, and a
  // replica's averaged by local SGD (bf16 copies and their f32 masters).
  double gradientWidth = mixed ? 2 : 4, averagedWidth = mixed ? 6 : 4;
  double stageParams = stages.updatedParameters[slowest];
  double gradientBytes = stageParams * gradientWidth;
  double gatheredBytes = stages.parameterReads[slowest] * gradientWidth;
  GroupPlacement dpGroup{dp, plan.tp};
  bool overlap = options.overlapGradientReduction &&
                 costs.getCluster().overlapsCommunication;
  // The bytes a worker and the busiest rank of stage `s` send per step for
  // data parallelism (the same but for a parameter server).
  auto syncTraffic = [&](int64_t s) -> ParameterServerTraffic {
    double gradients = stages.updatedParameters[s] * gradientWidth;
    if (dp <= 1)
      return {};
    if (plan.sync == DataParallelSync::ParameterServer)
      return getParameterServerTraffic(gradients, dp, plan.servers,
                                       plan.placement);
    double bytes;
    if (plan.sync == DataParallelSync::LocalSgd)
      bytes = dist::getRingTrafficBytes(
                  CollectiveKind::AllReduce,
                  int64_t(stages.updatedParameters[s] * averagedWidth), dp) /
              double(plan.syncEvery);
    else if (zero < 2)
      bytes = dist::getRingTrafficBytes(CollectiveKind::AllReduce,
                                        int64_t(gradients), dp);
    else if (zero == 2)
      // Every micro-batch's gradient is scattered (DeepSpeed's stage 2),
      // the updated parameters gathered once.
      bytes = m * dist::getRingTrafficBytes(CollectiveKind::ReduceScatter,
                                            int64_t(gradients), dp) +
              dist::getRingTrafficBytes(CollectiveKind::AllGather,
                                        int64_t(gradients), dp);
    else
      bytes = m * (dist::getRingTrafficBytes(
                       CollectiveKind::AllGather,
                       int64_t(stages.parameterReads[s] * gradientWidth), dp) +
                   dist::getRingTrafficBytes(CollectiveKind::ReduceScatter,
                                             int64_t(gradients), dp));
    return {bytes, bytes};
  };
  // A device's: dedicated servers are not among the devices.
  auto dataParallelBytes = [&](int64_t s) {
    ParameterServerTraffic traffic = syncTraffic(s);
    return plan.sync == DataParallelSync::ParameterServer &&
                   plan.placement == ServerPlacement::Dedicated
               ? traffic.worker
               : traffic.busiest;
  };
  double dpTime = 0;
  if (dp > 1)
    plan.ringSyncBytes = dist::getRingTrafficBytes(CollectiveKind::AllReduce,
                                                   int64_t(gradientBytes), dp);
  if (dp > 1 && plan.sync == DataParallelSync::ParameterServer) {
    // The push follows the backward pass as the ring's reduction does
    // (BytePS overlaps it the same way).
    dpTime = costs.getParameterServerTime(gradientBytes, dp, plan.servers,
                                          plan.placement, dpGroup);
    if (overlap)
      dpTime = std::max(0.0, dpTime - stageTime * 2.0 / 3.0);
  } else if (dp > 1 && plan.sync == DataParallelSync::LocalSgd) {
    // No gradient leaves its replica; every syncEvery steps the parameters
    // (and the f32 masters) are averaged after the step, on the critical
    // path.
    double averagedBytes = stageParams * averagedWidth;
    dpTime = costs.getCollectiveTime(CollectiveKind::AllReduce, averagedBytes,
                                     dpGroup) /
             double(plan.syncEvery);
  } else if (dp > 1) {
    double scatter = costs.getCollectiveTime(CollectiveKind::ReduceScatter,
                                             gradientBytes, dpGroup);
    if (zero < 3) {
      // A reduction can hide behind the backward pass that makes it: the
      // last micro-batch's for a sum reduced once, each micro-batch's under
      // ZeRO-2, which scatters each.
      double hidden = overlap ? stageTime * 2.0 / 3.0 : 0.0;
      double gather = costs.getCollectiveTime(CollectiveKind::AllGather,
                                              gradientBytes, dpGroup);
      if (zero == 0)
        dpTime =
            std::max(0.0, costs.getCollectiveTime(CollectiveKind::AllReduce,
                                                  gradientBytes, dpGroup) -
                              hidden);
      else
        dpTime = (zero == 2 ? (m - 1) * std::max(0.0, scatter - hidden) : 0.0) +
                 std::max(0.0, scatter + gather - hidden);
    } else {
      // Prefetching hides the gathers behind the layers' compute.
      double gathers = costs.getCollectiveTime(CollectiveKind::AllGather,
                                               gatheredBytes, dpGroup);
      dpTime = m * (overlap ? std::max(0.0, gathers + scatter - stageTime)
                            : gathers + scatter);
    }
  }
  ParameterServerTraffic sync = syncTraffic(slowest);
  plan.workerSyncBytes = sync.worker;
  plan.busiestSyncBytes = sync.busiest;
  plan.time.dataParallelComm = dpTime;
  // From ZeRO-1 on the update runs on this rank's shard, whatever the stage
  // keeps whole; a parameter server's servers update their parts, each
  // 1/servers.
  bool server = plan.sync == DataParallelSync::ParameterServer;
  int64_t updaters = server ? plan.servers : zero >= 1 ? dp : 1;
  plan.time.optimizer = costs.getOptimizerTime(stageParams, mixed, updaters);
  plan.stepTime = plan.time.total();
  // What the busiest rank sends per step, whichever stage it is on (the
  // one with the most memory may send less); a tied parameter's first and
  // last stages exchange it once per step: the last sends its gradient part,
  // the first the updated parameter. Under ZeRO-2 and -3, which scatter
  // every micro-batch's gradient, the last stage sends its part with each.
  plan.commBytesPerRank = 0;
  double tied = post.sharedParameters * gradientWidth;
  for (int64_t s = 0; s < plan.pp; ++s) {
    double exchanged = plan.pp == 1       ? 0.0
                       : s == plan.pp - 1 ? (zero >= 2 ? m : 1) * tied
                       : s == 0           ? tied
                                          : 0.0;
    plan.commBytesPerRank = std::max(
        plan.commBytesPerRank,
        dataParallelBytes(s) + exchanged +
            reshardings * stages.stepCommunicationBytes[s] +
            m * (stages.communicationBytes[s] + stages.pointToPointBytes[s]));
  }

  // Megatron's counting: 3 forward passes' worth of FLOPs (4 with full
  // recomputation) over the global batch.
  double modelFlops = double(graph.getForwardFlops()) * options.globalBatch /
                      graph.getBatch();
  double hardwareFlops =
      modelFlops * (plan.recompute == Recompute::Full ? 4 : 3);
  plan.tflopsPerGpu = hardwareFlops / (plan.stepTime * options.gpus) / 1e12;
  plan.mfu = 3 * modelFlops /
             (plan.stepTime * options.gpus * costs.getPeakFlops());
}

void Searcher::priceMemory(EvaluatedPlan &plan, const StageFigures &stages,
                           const LayerFigures &layers, const SegmentCost &pre,
                           const SegmentCost &post) const {
  bool mixed = options.dtype == "bf16";
  int64_t pp = plan.pp;
  auto gradientBytes = [&](double parameters) {
    return getModelStateBytes(parameters, mixed, plan.zero, plan.dp).gradients;
  };
  // A tied LM head's gradient is a partial sum until the embedding's adds to
  // it: ZeRO-2 and -3 reduce-scatter it only then, so a stage that holds
  // both keeps it whole until then. Over several micro-batches each part is
  // summed (and scattered) on its own, and added to the other after them.
  double sharedGradient =
      pp == 1 && plan.microbatches == 1
          ? getModelStateBytes(post.sharedParameters, mixed, 0, plan.dp)
                .gradients
          : gradientBytes(post.sharedParameters);
  // A part of a stage in program order: what it keeps of a micro-batch for
  // the backward pass, and the gradients it holds once its backward ran.
  struct Part {
    const SegmentCost *cost;
    double kept, gradients;
  };
  double peak = -1;
  for (int64_t s = 0; s < pp; ++s) {
    std::vector<Part> parts;
    if (s == 0)
      parts.push_back(
          {&pre, pre.activationBytes, gradientBytes(pre.parameters)});
    for (int64_t layer : stages.layerIndices[s])
      parts.push_back({layers.cost[layer], layers.activation[layer],
                       gradientBytes(layers.parameters[layer])});
    if (s == pp - 1)
      // A tied LM head's gradient is held from here until the embedding's
      // adds to it.
      parts.push_back({&post, post.activationBytes,
                       gradientBytes(post.parameters) + sharedGradient});
    double keptAll = 0, gradientsAll = 0;
    for (const Part &part : parts) {
      keptAll += part.kept;
      gradientsAll += part.gradients;
    }
    // Stage s of a 1F1B pipeline holds p - s micro-batches at its peak.
    double inFlight = 1;
    if (plan.schedule == PipelineSchedule::GPipe)
      inFlight = plan.microbatches;
    else if (plan.schedule)
      // At least the micro-batch the stage runs (the last stage of 1F1B
      // with fewer micro-batches than stages).
      inFlight = std::max(1.0, getInFlightMicrobatches(*plan.schedule, pp,
                                                       plan.microbatches,
                                                       plan.virtualStages) *
                                   double(pp - s) / pp);
    // With several micro-batches every gradient is an accumulator, written
    // by the first micro-batch's backward pass and held from then on: the
    // micro-batches that run after it hold them all, beside fewer
    // activations unless a schedule keeps the stage as full (1F1B's steady
    // state, or each micro-batch's forward and backward without a
    // pipeline, whose forward passes then run beside the accumulators too).
    bool accumulating = plan.microbatches > 1;
    bool steady = plan.microbatches > inFlight;
    double laterInFlight = steady ? inFlight : std::max(1.0, inFlight - 1);
    ModelStateBytes state =
        getModelStateBytes(stages.parameters[s], mixed, plan.zero, plan.dp);
    // The last stage's copy of a tied parameter has no optimizer state of
    // its own: the first stage updates the parameter.
    double updated = stages.updatedParameters[s];
    state.optimizerState =
        getModelStateBytes(updated, mixed, plan.zero, plan.dp).optimizerState;
    // A parameter server's state is on its servers: a colocated one holds
    // 1/servers of it (ZeRO-1's layout at one server per rank), a worker
    // beside dedicated servers none.
    if (plan.sync == DataParallelSync::ParameterServer)
      state.optimizerState =
          plan.placement == ServerPlacement::Dedicated
              ? 0
              : getModelStateBytes(updated, mixed, 1, plan.servers)
                    .optimizerState;
    MemoryBreakdown base;
    base.parameters = state.parameters;
    base.optimizerState = state.optimizerState;
    auto consider = [&](const MemoryBreakdown &memory) {
      if (memory.total() > peak) {
        peak = memory.total();
        plan.memory = memory;
        plan.peakStage = s;
      }
    };
    // The embedding's backward adds a tied LM head's gradient into its own
    // (written over it), which its peak counts: that gradient is no longer
    // held beside it.
    double handedOver = pp == 1 ? sharedGradient : 0.0;
    // Parameters resharded for their readers are made before the first
    // micro-batch and held until the last one's read them (not under
    // ZeRO-3, which reshards each micro-batch's gathered copy).
    double copies =
        accumulating && plan.zero < 3 ? stages.parameterCopyBytes[s] : 0.0;
    // ZB-H1 runs the first s backwards of stage s as input gradients only;
    // their weight gradients wait for the cooldown, holding what they read.
    // Under ZeRO-2 and -3 the last stage sends a tied LM head's gradient
    // part with every micro-batch: that one does not wait.
    double deferredBytes = stages.deferredBytes[s];
    if (pp > 1 && s == pp - 1 && plan.zero >= 2)
      deferredBytes -= post.tiedDeferredBytes;
    double deferred =
        plan.schedule == PipelineSchedule::ZeroBubbleH1
            ? std::min<double>(s, plan.microbatches) * deferredBytes
            : 0.0;
    // Each part's forward and backward pass: what the part itself needs at
    // its peak, on top of what the earlier parts keep, the other
    // micro-batches in flight keep, and the gradients held.
    double before = 0, after = gradientsAll;
    for (const Part &part : parts) {
      after -= part.gradients;
      bool gathering = plan.zero >= 3;
      for (bool backward : {false, true}) {
        MemoryBreakdown memory = base;
        const SegmentCost::Peak &own =
            backward ? (gathering ? part.cost->backwardGatheredPeak
                                  : part.cost->backwardPeak)
                     : (gathering ? part.cost->forwardGatheredPeak
                                  : part.cost->forwardPeak);
        memory.activations =
            (inFlight - 1) * keptAll + before + own.savedBytes + deferred;
        memory.temporaries = own.bytes - own.savedBytes + copies;
        memory.gradients =
            backward ? after - (part.cost == &pre ? handedOver : 0.0) : 0.0;
        consider(memory);
        if (accumulating && (backward || steady)) {
          memory.activations = (laterInFlight - 1) * keptAll + before +
                               own.savedBytes + deferred;
          memory.gradients = gradientsAll;
          consider(memory);
        }
      }
      before += part.kept;
    }
    // The optimizer update: the gradients, each freed into its update;
    // under mixed precision each is widened to f32 for it, the largest
    // one's copy held beside them (of this rank's shard under ZeRO or a
    // colocated server; dedicated servers update on ranks of their own).
    MemoryBreakdown update = base;
    update.gradients = gradientsAll - handedOver;
    bool server = plan.sync == DataParallelSync::ParameterServer;
    if (mixed && !(server && plan.placement == ServerPlacement::Dedicated))
      update.temporaries = 4 * plan.strategy->largestParameter /
                           (plan.zero > 0 ? plan.dp
                            : server      ? plan.servers
                                          : 1);
    consider(update);
  }
}

std::vector<EvaluatedPlan> Searcher::getSyncChoices(int64_t dp) const {
  auto choice = [&](DataParallelSync sync, int64_t servers,
                    ServerPlacement placement, int64_t syncEvery) {
    EvaluatedPlan plan;
    plan.sync = sync;
    plan.servers = sync == DataParallelSync::ParameterServer ? servers : 0;
    plan.placement = placement;
    plan.syncEvery = syncEvery;
    return plan;
  };
  const PlanChoice &fixed = options.fixed;
  if (fixed.sync)
    return {choice(*fixed.sync, fixed.servers.value_or(dp),
                   fixed.placement.value_or(ServerPlacement::Colocated),
                   fixed.syncEvery.value_or(1))};
  std::vector<EvaluatedPlan> plans = {
      choice(DataParallelSync::AllReduce, 0, ServerPlacement::Colocated, 1)};
  if (options.space.sync && dp > 1)
    for (ServerPlacement placement :
         {ServerPlacement::Colocated, ServerPlacement::Dedicated})
      plans.push_back(
          choice(DataParallelSync::ParameterServer, dp, placement, 1));
  return plans;
}

void Searcher::checkBuildable(EvaluatedPlan &plan) const {
  plan.buildable = false;
  bool localSgd = plan.sync == DataParallelSync::LocalSgd;
  int64_t modelBatch =
      localSgd ? options.globalBatch / plan.dp : options.globalBatch;
  bool dedicated = plan.sync == DataParallelSync::ParameterServer &&
                   plan.placement == ServerPlacement::Dedicated;
  if (dedicated && (plan.servers > plan.dp || plan.dp % plan.servers))
    plan.notBuildable = "a count of dedicated parameter servers that does "
                        "not divide the data-parallel ranks";
  else if (plan.sync == DataParallelSync::ParameterServer && !dedicated &&
           plan.servers != plan.dp)
    plan.notBuildable = "fewer colocated parameter servers than "
                        "data-parallel ranks (parc builds one per rank)";
  else if (dedicated && (plan.pp > 1 || plan.microbatches > 1))
    plan.notBuildable = "dedicated parameter servers with a pipeline or "
                        "gradient accumulation";
  else if (localSgd && (plan.pp > 1 || options.dtype == "bf16"))
    plan.notBuildable = plan.pp > 1 ? "local SGD with a pipeline"
                                    : "local SGD with mixed precision";
  else if (localSgd && graph.getBatch() != modelBatch)
    plan.notBuildable = "local SGD compiles the train step of one replica's "
                        "batch, " +
                        std::to_string(modelBatch) + ", and the model's is " +
                        std::to_string(graph.getBatch()) +
                        " (regenerate it with --batch " +
                        std::to_string(modelBatch) + ")";
  else if (!localSgd && options.globalBatch != graph.getBatch())
    plan.notBuildable = "the model's batch is " +
                        std::to_string(graph.getBatch()) +
                        ", not the global batch (regenerate it with --batch " +
                        std::to_string(options.globalBatch) + ")";
  else
    plan.buildable = true;
}

/// Whether an op of `forward` reduces a batch-sized dimension 0 away, as its
/// sharding rule says (a factor of that dimension misses a result: a
/// reduction's, or batch_norm's statistics), into a value the pass reads
/// on: batch statistics, not the loss.
static bool reducesBatchMidway(func::FuncOp forward, int64_t batch) {
  WalkResult walk = forward.walk([&](ShardingRuleOpInterface op) {
    if (llvm::all_of(op->getUsers(),
                     [](Operation *user) { return isa<func::ReturnOp>(user); }))
      return WalkResult::advance();
    ShardingRule rule = op.getShardingRule();
    auto spansEveryResult = [&](int64_t factor) {
      return llvm::all_of(rule.getResults(), [&](const TensorFactors &result) {
        return llvm::any_of(result, [&](const DimFactors &dim) {
          return llvm::is_contained(dim, factor);
        });
      });
    };
    for (auto [value, dims] :
         llvm::zip(op->getOperands(), rule.getOperands())) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      if (type && type.getRank() > 0 && type.getDimSize(0) == batch &&
          !dims.empty() && !llvm::all_of(dims[0], spansEveryResult))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

// A forward pass that needs a value summed over the whole batch while it
// runs (batch normalization's statistics) computes something else when the
// batch is split into micro-batches, and the pipeline pass refuses it. The
// pass is asked once, on two stages of two micro-batches, where an op
// reduces the batch away midway (so that transformers are not compiled for
// the question).
std::optional<std::string> Searcher::findMicrobatchRefusal() const {
  func::FuncOp forward = graph.getFunction();
  if (graph.getBatch() % 2 || !reducesBatchMidway(forward, graph.getBatch()))
    return std::nullopt;
  llvm::Expected<Plan> probe = readPlan(
      R"({"mesh": {"pp": 2}, "pipeline": {"axis": "pp", "microbatches": 2}})",
      "micro-batching probe");
  if (!probe) {
    llvm::consumeError(probe.takeError());
    return std::nullopt;
  }
  std::string error;
  if (succeeded(compilePlan(forward, *probe, error)) ||
      !StringRef(error).contains(kWholeBatchValueError))
    return std::nullopt;
  return error;
}

void Searcher::admit(EvaluatedPlan plan) {
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
  if (total > options.memoryLimit)
    return reject(plan.describe(),
                  llvm::formatv("out of memory on stage {0}: needs {1}, {2} "
                                "over the {3} limit ({4} of activations)",
                                plan.peakStage, formatBytes(total),
                                formatBytes(total - options.memoryLimit),
                                formatBytes(options.memoryLimit),
                                formatBytes(plan.memory.activations)));
  result.plans.push_back(std::move(plan));
}

bool Searcher::refusesMicrobatches(const MeshChoice &choice) const {
  return microbatchRefusal &&
         (choice.pp > 1 ||
          options.globalBatch / (choice.dp * choice.microBatch) > 1);
}

StrategyConfig Searcher::getStrategyConfig(const MeshChoice &choice) const {
  // The optimizer's share is priced at a pipeline-free plan's micro-batch
  // count, which (tp, micro-batch) decide: keying the solves on each plan's
  // own count would repeat them for every pipeline depth.
  int64_t pipelineFreeDp = std::max<int64_t>(1, options.gpus / choice.tp);
  return {choice.tp, choice.microBatch, choice.sp,
          std::max<int64_t>(1, options.globalBatch /
                                   (pipelineFreeDp * choice.microBatch))};
}

void Searcher::evaluate(const MeshChoice &choice) {
  auto [dp, tp, pp, microBatch, sp] = choice;
  std::string mesh = llvm::formatv("dp={0} tp={1} pp={2} mb={3} sp={4}", dp,
                                   tp, pp, microBatch, sp ? "on" : "off");
  if (refusesMicrobatches(choice)) {
    reject(mesh, "the model cannot be split into micro-batches: " +
                     *microbatchRefusal);
    return;
  }
  const StrategySolution &solution = ilp.solve(getStrategyConfig(choice));
  if (rejectsStrategy(solution, mesh, tp))
    return;
  if (sp && !solution.usesSequenceParallel && tp > 1 &&
      !options.fixed.sequenceParallel)
    return; // the same plan as sp=off
  SegmentCost none;
  auto segmentCost = [&](Segment segment) -> const SegmentCost & {
    auto it = solution.segments.find(segment);
    return it == solution.segments.end() ? none : it->second;
  };
  const SegmentCost &pre = segmentCost({Segment::Pre});
  const SegmentCost &post = segmentCost({Segment::Post});
  // A model without repeated layers is all "before the layers".
  const SegmentCost &layerCost =
      graph.getNumLayers() > 0
          ? segmentCost({Segment::Layer, graph.getLayerClasses()[0]})
          : pre;

  std::vector<std::optional<PipelineSchedule>> schedules = {std::nullopt};
  if (pp > 1) {
    schedules.clear();
    if (options.fixed.schedule)
      schedules.push_back(*options.fixed.schedule);
    else
      for (PipelineSchedule schedule :
           {PipelineSchedule::OneFOneB, PipelineSchedule::GPipe,
            PipelineSchedule::Interleaved1F1B, PipelineSchedule::ZeroBubbleH1})
        schedules.push_back(schedule);
  }
  for (Recompute recompute :
       choices<Recompute>(options.fixed.recompute, options.space.recompute,
                          {Recompute::None, Recompute::Selective,
                           Recompute::Full},
                          Recompute::None)) {
    LayerFigures layers = getLayerFigures(solution, recompute);
    std::vector<double> layerTime(layers.time.size());
    for (size_t i = 0; i < layerTime.size(); ++i)
      layerTime[i] = layers.time[i] + layers.recompute[i];
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
        std::vector<int64_t> sizes = partition(
            layerTime,
            pre.forwardTime + pre.backwardTime + pre.communicationTime,
            post.forwardTime + post.backwardTime + post.communicationTime,
            chunks);
        StageFigures stages = layOutStages(layers, pre, post, pp, v, sizes);
        for (int64_t zero :
             choices<int64_t>(options.fixed.zero, options.space.zero && dp > 1,
                              {0, 1, 2, 3}, 0))
          for (EvaluatedPlan plan : getSyncChoices(dp)) {
            // Both keep the optimizer state where they say: ZeRO shards it
            // over the ranks, a parameter server on its servers.
            if (zero > 0 && plan.sync != DataParallelSync::AllReduce)
              continue;
            if (plan.sync == DataParallelSync::ParameterServer &&
                plan.placement == ServerPlacement::Colocated &&
                plan.servers > dp) {
              reject(mesh, llvm::formatv("{0} colocated servers on dp={1} "
                                         "ranks: each runs at most one",
                                         plan.servers, dp));
              continue;
            }
            plan.dp = dp;
            plan.tp = tp;
            plan.pp = pp;
            plan.microBatch = microBatch;
            plan.microbatches = options.globalBatch / (dp * microBatch);
            plan.zero = zero;
            plan.virtualStages = v;
            plan.sequenceParallel = solution.usesSequenceParallel;
            plan.recompute = recompute;
            plan.schedule = schedule;
            plan.strategy = &solution;
            plan.layersPerStage = stages.layers;
            for (int64_t s = 0; s < pp; ++s)
              plan.stageMicrobatchTime.push_back(stages.time[s] +
                                                 stages.recompute[s]);
            plan.pointToPointTime = stages.pointToPoint;
            plan.bubbleFraction =
                schedule
                    ? getBubbleFraction(*schedule, pp, plan.microbatches, v)
                    : 0;
            // The memory first: the traffic is priced for its peak stage.
            priceMemory(plan, stages, layers, pre, post);
            priceTime(plan, stages, layerCost, pre, post);
            checkBuildable(plan);
            admit(std::move(plan));
          }
      }
    }
  }
}

std::vector<std::variant<MeshChoice, RejectedPlan>>
Searcher::enumerateMeshes() const {
  std::vector<std::variant<MeshChoice, RejectedPlan>> meshes;
  auto reject = [&](std::string mesh, std::string reason) {
    meshes.push_back(RejectedPlan{std::move(mesh), std::move(reason)});
  };
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
          meshes.push_back(MeshChoice{dp, tp, pp, microBatch, sp});
      }
    }
  }
  return meshes;
}

SearchResult Searcher::run() {
  microbatchRefusal = findMicrobatchRefusal();
  std::vector<std::variant<MeshChoice, RejectedPlan>> meshes =
      enumerateMeshes();
  // The strategy ILPs first, in parallel: they are most of a search's time.
  std::vector<StrategyConfig> configs;
  for (const auto &mesh : meshes)
    if (const auto *choice = std::get_if<MeshChoice>(&mesh);
        choice && !refusesMicrobatches(*choice))
      configs.push_back(getStrategyConfig(*choice));
  ilp.solveAll(configs);
  result.ilpSolves = ilp.getNumSolved();
  for (auto &mesh : meshes) {
    if (auto *rejected = std::get_if<RejectedPlan>(&mesh))
      reject(std::move(rejected->configuration), std::move(rejected->reason));
    else
      evaluate(std::get<MeshChoice>(mesh));
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
  bool server = fixed.sync == DataParallelSync::ParameterServer;
  if (!server && (fixed.servers || fixed.placement)) {
    error = "--fix servers and placement are for sync=parameter-server";
    return failure();
  }
  if (fixed.sync != DataParallelSync::LocalSgd && fixed.syncEvery) {
    error = "--fix sync_every is for sync=local-sgd";
    return failure();
  }
  if (fixed.sync && *fixed.sync != DataParallelSync::AllReduce &&
      fixed.zero.value_or(0) > 0) {
    error = "--fix sync=" + getDataParallelSyncName(*fixed.sync).str() +
            " keeps the optimizer state " +
            (server ? "on its servers" : "whole on every replica") +
            ", so zero must be 0";
    return failure();
  }
  if (server && fixed.servers && fixed.dp &&
      fixed.placement.value_or(ServerPlacement::Colocated) ==
          ServerPlacement::Colocated &&
      *fixed.servers > *fixed.dp) {
    error = llvm::formatv("--fix servers={0} colocated on dp={1} ranks: each "
                          "rank runs at most one server",
                          *fixed.servers, *fixed.dp);
    return failure();
  }
  for (auto [name, value] : {std::pair{"tp", fixed.tp}, {"pp", fixed.pp},
                             {"dp", fixed.dp}})
    if (value && (*value < 1 || options.gpus % *value)) {
      error = llvm::formatv("--fix {0}={1} does not divide --gpus {2}", name,
                            *value, options.gpus);
      return failure();
    }
  if (fixed.tp && fixed.pp && fixed.dp) {
    // Each divides --gpus, so the product may still overflow.
    int64_t product;
    bool overflow = llvm::MulOverflow(*fixed.tp, *fixed.pp, product) ||
                    llvm::MulOverflow(product, *fixed.dp, product);
    if (overflow || product != options.gpus) {
      error = llvm::formatv("--fix dp={0},tp={1},pp={2} uses {3} GPUs, not "
                            "--gpus {4}",
                            *fixed.dp, *fixed.tp, *fixed.pp,
                            overflow ? std::string("more than 2^63")
                                     : std::to_string(product),
                            options.gpus);
      return failure();
    }
  }
  if (fixed.schedule && fixed.pp && *fixed.pp == 1) {
    error = "--fix schedule=... needs pp > 1";
    return failure();
  }
  return Searcher(graph, costs, ilp, options).run();
}
