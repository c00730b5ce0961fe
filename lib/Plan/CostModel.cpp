//===- CostModel.cpp - the planner's analytical cost model ----------------===//

#include "parc/Plan/CostModel.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using dist::CollectiveKind;

CostModel::CostModel(const ClusterSpec &cluster, std::string dtype,
                     bool unfusedKernels, bool attentionDropout)
    : cluster(cluster), peakFlops(cluster.getPeakFlops(dtype).value_or(0)),
      unfusedKernels(unfusedKernels), attentionDropout(attentionDropout) {}

double CostModel::getKernelTime(double flops, double bytes,
                                bool fusedAttention) const {
  double computeTime =
      flops <= 0 ? 0
      : fusedAttention && cluster.attentionFlops
          ? flops / *cluster.attentionFlops
          : flops / (peakFlops * cluster.getGemmEfficiency(flops));
  double memoryTime =
      bytes / (cluster.hbmBandwidth * cluster.efficiency.memoryBound);
  return cluster.kernelLatency + std::max(computeTime, memoryTime);
}

double CostModel::getOptimizerTime(double parameters, bool mixedPrecision,
                                   int64_t updaters) const {
  updaters = std::max<int64_t>(1, updaters);
  ModelStateBytes updated = getModelStateBytes(parameters, mixedPrecision,
                                               updaters > 1 ? 3 : 0, updaters);
  return getKernelTime(10 * parameters / updaters, 2 * updated.total());
}

double CostModel::getBusBandwidth(const GroupPlacement &group) const {
  int64_t perNode = cluster.devicesPerNode;
  if (group.groupSize * group.stride <= perNode)
    return cluster.intraNode.bandwidth;
  // Members of the group that share a node each bring a NIC; the ring's
  // inter-node hops carry the traffic.
  int64_t membersPerNode =
      std::max<int64_t>(1, perNode / std::max<int64_t>(1, group.stride));
  membersPerNode = std::min(membersPerNode, group.groupSize);
  return std::min(cluster.intraNode.bandwidth,
                  membersPerNode * cluster.interNode.bandwidth);
}

double CostModel::getLinkLatency(const GroupPlacement &group) const {
  return group.groupSize * group.stride <= cluster.devicesPerNode
             ? cluster.intraNode.latency
             : cluster.interNode.latency;
}

double CostModel::getCollectiveTime(CollectiveKind kind, double bufferBytes,
                                    const GroupPlacement &group) const {
  int64_t n = group.groupSize;
  if (n <= 1 || kind == CollectiveKind::AllSlice || bufferBytes <= 0)
    return 0;
  double traffic = dist::getRingTrafficBytes(
      kind, static_cast<int64_t>(bufferBytes), n);
  int64_t steps = kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1;
  return cluster.collectiveWait + steps * getLinkLatency(group) +
         traffic / (getBusBandwidth(group) * cluster.efficiency.collective);
}

double CostModel::getPointToPointTime(double bytes,
                                      const GroupPlacement &group) const {
  return cluster.collectiveWait + getLinkLatency(group) +
         bytes / (getBusBandwidth({2, group.stride}) *
                  cluster.efficiency.collective);
}

ParameterServerTraffic
mlir::parc::getParameterServerTraffic(double gradientBytes, int64_t workers,
                                      int64_t servers,
                                      ServerPlacement placement) {
  double n = double(workers), k = double(std::max<int64_t>(1, servers));
  ParameterServerTraffic traffic;
  if (workers <= 1 && placement == ServerPlacement::Colocated)
    return traffic;
  if (placement == ServerPlacement::Dedicated) {
    traffic.worker = gradientBytes;
    traffic.busiest = std::max(gradientBytes, gradientBytes * n / k);
    return traffic;
  }
  traffic.busiest = gradientBytes * (n + k - 2) / k;
  traffic.worker = servers < workers ? gradientBytes : traffic.busiest;
  return traffic;
}

double CostModel::getParameterServerTime(double gradientBytes, int64_t workers,
                                         int64_t servers,
                                         ServerPlacement placement,
                                         const GroupPlacement &group) const {
  ParameterServerTraffic traffic =
      getParameterServerTraffic(gradientBytes, workers, servers, placement);
  if (traffic.busiest <= 0)
    return 0;
  bool colocated = placement == ServerPlacement::Colocated;
  double bandwidth =
      colocated ? getBusBandwidth(group) : cluster.interNode.bandwidth;
  double latency =
      colocated ? getLinkLatency(group) : cluster.interNode.latency;
  // A message per peer each way: a colocated server has the other n - 1
  // ranks (the ring's 2 (n - 1) steps), a dedicated one the n workers.
  int64_t peers = colocated ? workers - 1 : std::max(workers, servers);
  return cluster.collectiveWait + 2 * peers * latency +
         traffic.busiest / (bandwidth * cluster.efficiency.collective);
}

double mlir::parc::getBubbleFraction(PipelineSchedule schedule, int64_t stages,
                                     int64_t microbatches,
                                     int64_t virtualStages) {
  if (stages <= 1)
    return 0;
  double idle = double(stages - 1) / microbatches;
  switch (schedule) {
  case PipelineSchedule::Interleaved1F1B:
    return idle / std::max<int64_t>(1, virtualStages);
  case PipelineSchedule::ZeroBubbleH1:
    return idle / 3;
  default:
    return idle;
  }
}

double mlir::parc::getInFlightMicrobatches(PipelineSchedule schedule, int64_t stages,
                                           int64_t microbatches,
                                           int64_t virtualStages) {
  if (stages <= 1)
    return 1;
  if (schedule == PipelineSchedule::GPipe)
    return microbatches;
  double inFlight = std::min<double>(stages, microbatches);
  if (schedule == PipelineSchedule::Interleaved1F1B)
    inFlight *= 1 + double(stages - 1) / (stages * virtualStages);
  return inFlight;
}

ModelStateBytes mlir::parc::getModelStateBytes(double parametersPerRank,
                                               bool mixedPrecision,
                                               int64_t zeroStage, int64_t dp) {
  double paramBytes = mixedPrecision ? 2 : 4;
  double gradBytes = mixedPrecision ? 2 : 4;
  // Adam: fp32 master copy (mixed precision only), momentum and variance.
  double stateBytes = mixedPrecision ? 12 : 8;
  ModelStateBytes bytes{parametersPerRank * paramBytes,
                        parametersPerRank * gradBytes,
                        parametersPerRank * stateBytes};
  if (zeroStage >= 1)
    bytes.optimizerState /= dp;
  if (zeroStage >= 2)
    bytes.gradients /= dp;
  if (zeroStage >= 3)
    bytes.parameters /= dp;
  return bytes;
}

double mlir::parc::getKorthikantiActivationBytes(int64_t seq, int64_t batch,
                                                 int64_t hidden, int64_t heads,
                                                 int64_t tp,
                                                 bool sequenceParallel,
                                                 Recompute recompute) {
  double sbh = double(seq) * batch * hidden;
  double t = tp;
  double attention =
      recompute == Recompute::None ? 5.0 * heads * seq / hidden : 0.0;
  if (recompute == Recompute::Full)
    return sequenceParallel ? 2 * sbh / t : 2 * sbh;
  if (sequenceParallel)
    return sbh / t * (34 + attention);
  return sbh * (10 + 24 / t + attention / t);
}

double mlir::parc::getMegatronStepFlops(int64_t batch, int64_t seq,
                                        int64_t layers, int64_t hidden,
                                        int64_t vocab, bool recompute) {
  double b = batch, s = seq, l = layers, h = hidden, v = vocab;
  return (recompute ? 96 : 72) * b * s * l * h * h *
         (1 + s / (6 * h) + v / (16 * l * h));
}
