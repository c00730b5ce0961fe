//===- Cluster.h - cluster.json, the machine a plan is for ------*- C++ -*-===//
//
// A cluster is nodes of identical devices: their peak FLOP/s per dtype,
// memory and HBM bandwidth, the links within a node and between nodes, and
// the fractions of those peaks that real kernels reach. The planner's cost
// model prices a plan against it; `parc-plan --calibrate` measures one.
// docs/cluster.md describes the fields and the presets' sources.
//
// Worked example: the efficiency of one GEMM on dgx-h100, whose curve is
// [[1e9, 0.36], [1e10, 0.62], [1e11, 0.78], [1e12, 0.84]]:
//
//   getGemmEfficiency(1e10)    = 0.62    (at a point)
//   getGemmEfficiency(3.16e10) = 0.70    (halfway in log10(flops))
//   getGemmEfficiency(1e6)     = 0.36    (clamped below the first point)
//   getGemmEfficiency(1e15)    = 0.84    (clamped above the last)
//
// so a 1e10-FLOP bf16 GEMM is priced at 1e10 / (989e12 * 0.62) s.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_CLUSTER_H
#define PARC_PLAN_CLUSTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::parc {

/// One kind of link: what one device sends per second in one direction, and
/// the fixed cost of a message.
struct LinkSpec {
  /// Bytes per second per device per direction; positive.
  double bandwidth = 0;
  /// Seconds; positive.
  double latency = 0;
};

/// One point of the GEMM efficiency curve.
struct GemmEfficiencyPoint {
  /// FLOPs of one GEMM; positive.
  double flops = 0;
  /// The fraction of peak it reaches, in (0, 1].
  double fraction = 0;
};

/// The fractions of the peaks that real kernels reach.
struct EfficiencySpec {
  /// Strictly ascending in flops; at least one point.
  std::vector<GemmEfficiencyPoint> gemm;
  /// Fraction of hbm_bandwidth that bandwidth-bound kernels reach, in (0, 1].
  double memoryBound = 0;
  /// Fraction of link bandwidth that NCCL-style collectives reach, in (0, 1].
  double collective = 0;
};

/// The default efficiencies (docs/planner.md), used by every preset until
/// `parc-plan --calibrate` measures better ones.
EfficiencySpec getDefaultEfficiency();

/// The dtypes a peak may be given for.
llvm::ArrayRef<llvm::StringRef> getPeakFlopsDtypes();

struct ClusterSpec {
  std::string name;
  /// At least 1.
  int64_t devicesPerNode = 1;
  /// At least 0; 0 = as many nodes as a plan asks for.
  int64_t nodes = 0;
  /// dtype (one of getPeakFlopsDtypes(), each at most once) -> FLOP/s per
  /// device, in the order of the file; at least one.
  std::vector<std::pair<std::string, double>> peakFlops;
  /// Bytes of memory per device.
  double memoryBytes = 0;
  /// Bytes per second per device.
  double hbmBandwidth = 0;
  LinkSpec intraNode;
  LinkSpec interNode;
  EfficiencySpec efficiency;
  /// Seconds every kernel costs before it does any work (launch and call
  /// overhead); optional in cluster.json (`kernel_latency`), 0 if absent.
  double kernelLatency = 0;
  /// FLOP/s per device that fused attention kernels (and their gradients)
  /// reach; optional in cluster.json (`attention_flops`): absent, their
  /// FLOPs are priced on the GEMM efficiency curve, as a FlashAttention
  /// kernel runs. parc's cpu attention is scalar code, far from the GEMMs'
  /// rate, and its FLOPs grow with the sequence squared, so a calibrated
  /// cluster measures it.
  std::optional<double> attentionFlops;
  /// Whether collectives run beside compute (NCCL on its own stream), so
  /// a gradient reduction or ZeRO-3's gathers can hide behind the layers;
  /// optional in cluster.json (`overlaps_communication`), true if absent.
  /// libparcrt's MPI collectives block the rank that calls them.
  bool overlapsCommunication = true;
  /// Seconds each blocking collective waits, beyond its link time, for the
  /// group's slowest rank (ranks that share cores wait for a descheduled
  /// partner, and MPI's spinning wait takes the core it needs); optional
  /// in cluster.json (`collective_wait`), 0 if absent. `--calibrate` fits
  /// it to a tensor-parallel train step.
  double collectiveWait = 0;
  /// Who measured the numbers ("parc-plan --calibrate", "preset: ...").
  std::optional<std::string> measuredBy;

  /// The peak FLOP/s per device for `dtype`, or nullopt.
  std::optional<double> getPeakFlops(llvm::StringRef dtype) const;
  /// The fraction of peak a GEMM of `flops` FLOPs reaches: the efficiency
  /// curve, piecewise linear in log10(flops), clamped at both ends.
  double getGemmEfficiency(double flops) const;
};

/// Reads cluster.json text. Errors are json::ReadErrors, "FILE:LINE:COL:
/// MESSAGE". Every field but `nodes` and `measured_by` is required.
llvm::Expected<ClusterSpec> readCluster(llvm::StringRef text,
                                        llvm::StringRef fileName);

/// The cluster as JSON text; readCluster reads it back to the same cluster.
std::string writeCluster(const ClusterSpec &cluster);

/// The preset `name`, or nullopt.
std::optional<ClusterSpec> getClusterPreset(llvm::StringRef name);
/// dgx-a100-80g, dgx-h100, h200, cpu-local.
llvm::ArrayRef<llvm::StringRef> getClusterPresetNames();

} // namespace mlir::parc

#endif // PARC_PLAN_CLUSTER_H
