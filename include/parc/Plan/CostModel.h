//===- CostModel.h - the planner's analytical cost model --------*- C++ -*-===//
//
// Every time and memory figure of parc-plan comes from the functions here, so
// a report can say which formula produced it (docs/planner.md lists them
// with their sources):
//
//   op time          kernel latency +
//                    max(F / (peak * gemm_efficiency(F)), B / (hbm * eff))
//   collective time  wait + steps * latency + ring traffic / (bus bw * eff)
//   parameter server wait + 2 peers * latency + the busiest rank's bytes /
//                    (bw * eff)
//   pipeline bubble  (p-1)/m (GPipe, 1F1B), (p-1)/(v m) (interleaved),
//                    (p-1)/(3m) (ZB-H1), as a fraction of the ideal time
//   model state      Rajbhandari et al. 2020: (2 + 2 + K) Psi with mixed
//                    precision (K = 12), ZeRO stages dividing the terms by dp
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_COSTMODEL_H
#define PARC_PLAN_COSTMODEL_H

#include "parc/Plan/Cluster.h"
#include "parc/Plan/Plan.h"

#include "dist/IR/DistOps.h"

#include <cstdint>
#include <string>

namespace mlir::parc {

/// Where the ranks of one collective group sit: `groupSize` ranks whose
/// linear ranks are `stride` apart (axes inside the group's axis vary
/// faster). The group stays inside a node when it fits in one.
struct GroupPlacement {
  int64_t groupSize = 1;
  int64_t stride = 1;
};

class CostModel {
public:
  /// `dtype` is the compute dtype ("f32" or "bf16"); `unfusedKernels`
  /// prices fused ops (UnfusedTrafficOpInterface) as unfused
  /// implementations that move their intermediates through memory,
  /// `attentionDropout` with their dropout step.
  CostModel(const ClusterSpec &cluster, std::string dtype,
            bool unfusedKernels = false, bool attentionDropout = false);

  bool pricesUnfusedKernels() const { return unfusedKernels; }
  bool pricesAttentionDropout() const { return attentionDropout; }

  const ClusterSpec &getCluster() const { return cluster; }
  double getPeakFlops() const { return peakFlops; }

  /// Seconds for a kernel doing `flops` over `bytes` of memory traffic; a
  /// fused attention kernel's FLOPs at the cluster's attention rate when it
  /// has one.
  double getKernelTime(double flops, double bytes,
                       bool fusedAttention = false) const;

  /// Seconds for the optimizer's update of `parameters` split over
  /// `updaters` ranks (ZeRO's shards, a parameter server's parts): it reads
  /// and writes the state, the parameters and the gradients once.
  double getOptimizerTime(double parameters, bool mixedPrecision,
                          int64_t updaters) const;

  /// Bus bandwidth (bytes/s per rank) of a collective group: NVLink inside a
  /// node; across nodes, the NICs of the group's ranks in one node.
  double getBusBandwidth(const GroupPlacement &group) const;
  double getLinkLatency(const GroupPlacement &group) const;

  /// Seconds for a collective over a `bufferBytes` buffer (the
  /// CommunicationOpInterface buffer) in the alpha-beta model.
  double getCollectiveTime(dist::CollectiveKind kind, double bufferBytes,
                           const GroupPlacement &group) const;

  /// Seconds to send `bytes` to the next pipeline stage.
  double getPointToPointTime(double bytes, const GroupPlacement &group) const;

  /// Seconds for a synchronous parameter server to take `gradientBytes` of
  /// gradients from each of `workers` workers (`group`) and give back the
  /// updated parameters: push and pull pipelined tensor by tensor over
  /// full-duplex links, so the busiest rank's bytes in one direction bound
  /// it. Colocated servers share the workers' links; dedicated ones sit on
  /// nodes of their own, one inter-node link each, which every worker
  /// reaches over its own.
  double getParameterServerTime(double gradientBytes, int64_t workers,
                                int64_t servers, ServerPlacement placement,
                                const GroupPlacement &group) const;

private:
  const ClusterSpec &cluster;
  double peakFlops;
  bool unfusedKernels;
  bool attentionDropout;
};

/// The pipeline bubble as a fraction of the ideal (bubble-free) time.
double getBubbleFraction(PipelineSchedule schedule, int64_t stages,
                         int64_t microbatches, int64_t virtualStages);

/// Micro-batches whose activations stage 0 holds at the peak (a single stage one; 1F1B keeps at
/// most `stages` in flight, GPipe all of them; interleaving holds
/// 1 + (p-1)/(p v) times as many, Narayanan et al. 2021, section 2.2).
double getInFlightMicrobatches(PipelineSchedule schedule, int64_t stages,
                               int64_t microbatches, int64_t virtualStages);

/// What each rank of a synchronous, sharded parameter server sends per step
/// (and receives: the push and the pull mirror each other) for
/// `gradientBytes` of gradients per worker, every tensor split evenly over
/// the servers (BytePS). Colocated, k of n workers serve: a server sends
/// the other servers their parts of its gradient and every other worker its
/// part of the parameters, (n + k - 2) / k of the gradient bytes (the ring
/// all-reduce's 2 (n - 1) / n at k = n), a plain worker sends its gradient.
/// Dedicated: a worker sends its gradient, a server n / k of it.
struct ParameterServerTraffic {
  double worker = 0, busiest = 0;
};
ParameterServerTraffic getParameterServerTraffic(double gradientBytes,
                                                 int64_t workers,
                                                 int64_t servers,
                                                 ServerPlacement placement);

/// Bytes per parameter of model state (Rajbhandari et al. 2020, section
/// 3.1): parameters, gradients and optimizer state for Adam, each divided
/// by `dp` from ZeRO stage 3, 2 and 1 on. Mixed precision keeps 2-byte
/// parameters and gradients and K = 12 bytes of fp32 master weights and
/// moments; f32 training keeps 4 + 4 + 8.
struct ModelStateBytes {
  double parameters = 0;
  double gradients = 0;
  double optimizerState = 0;
  double total() const { return parameters + gradients + optimizerState; }
};
ModelStateBytes getModelStateBytes(double parametersPerRank, bool mixedPrecision,
                                   int64_t zeroStage, int64_t dp);

/// Activation bytes of one transformer layer per micro-batch and tensor
/// rank, Korthikanti et al. 2022, table 2: s b h (34 + 5 a s / h) without
/// parallelism, s b h (10 + 24/t + 5 a s/(h t)) with tensor parallelism,
/// s b h/t (34 + 5 a s / h) with sequence parallelism too; selective
/// recomputation drops the 5 a s/h term, full keeps the layer input only
/// (2 s b h, /t with sequence parallelism).
double getKorthikantiActivationBytes(int64_t seq, int64_t batch,
                                     int64_t hidden, int64_t heads,
                                     int64_t tp, bool sequenceParallel,
                                     Recompute recompute);

/// FLOPs of one GPT training step as Narayanan et al. 2021 count them
/// (equation 3, with activation recomputation): 96 B s l h^2 (1 + s/(6h) +
/// V/(16 l h)); without recomputation 72 instead of 96.
double getMegatronStepFlops(int64_t batch, int64_t seq, int64_t layers,
                            int64_t hidden, int64_t vocab, bool recompute);

} // namespace mlir::parc

#endif // PARC_PLAN_COSTMODEL_H
