//===- Calibration.h - measuring the machine parc runs on -------*- C++ -*-===//
//
// `parc-plan --calibrate` measures, through the compiled programs that
// parc-compile builds (libparcrt on the current backend, under mpirun),
// what the cost model needs: GEMM throughput over sizes (all ranks busy at
// once, as in a plan), the bandwidth of a large elementwise op, the fixed
// cost of a kernel, and all_reduce time over message sizes for the latency
// and bus bandwidth. It cannot tell an intra-node link from an inter-node
// one on a single machine (both get the measured figure), cannot see a
// GPU's bf16 peak without a GPU, and takes the device memory as the
// machine's memory divided by the ranks.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_CALIBRATION_H
#define PARC_PLAN_CALIBRATION_H

#include "parc/Plan/Cluster.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::parc {

struct CalibrationOptions {
  /// Ranks the measurements run on (the devices of the calibrated cluster).
  int64_t ranks = 2;
  /// The parc-compile binary that builds the micro-benchmarks.
  std::string compiler;
  /// Steps each micro-benchmark runs at least (the first is not timed).
  int64_t steps = 11;
  /// The timed seconds each micro-benchmark runs at least: a shorter one
  /// runs again with more steps. Ranks that share cores take turns in
  /// scheduler slices of milliseconds, which a shorter run would measure.
  double minimumSeconds = 0.5;
};

/// Measures the machine; progress lines go to `log`. Fails with a message
/// when a tool is missing (mpirun, parc-compile) or a run fails.
llvm::Expected<ClusterSpec> calibrate(const CalibrationOptions &options,
                                      llvm::raw_ostream &log);

} // namespace mlir::parc

#endif // PARC_PLAN_CALIBRATION_H
