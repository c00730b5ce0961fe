//===- Search.h - the search over parallel plans ----------------*- C++ -*-===//
//
// The outer search enumerates the mesh (dp x tp x pp over the GPUs), the
// micro-batch size, the pipeline schedule and its virtual stages, the ZeRO
// stage, recomputation and sequence parallelism; each choice of (tp,
// micro-batch, sequence parallelism) asks the strategy ILP for the ops'
// shardings once, a dynamic program splits the layers into balanced
// contiguous stages, and the cost model prices time and memory per stage.
// Plans that do not fit in memory, or that the model cannot take (a batch
// that dp does not divide, a tp that splits none of an op's dimensions), are
// kept with the reason. Enumeration order and tie-breaks are fixed, so the
// result is deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_SEARCH_H
#define PARC_PLAN_SEARCH_H

#include "parc/Plan/Plan.h"
#include "parc/Plan/StrategyIlp.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace mlir::parc {

/// A choice for every dimension of the space; unset in `SearchOptions::fixed`
/// means "search it".
struct PlanChoice {
  std::optional<int64_t> dp, tp, pp, microBatch, zero, virtualStages;
  std::optional<bool> sequenceParallel;
  std::optional<Recompute> recompute;
  std::optional<PipelineSchedule> schedule;
  /// How the data-parallel ranks synchronize; a parameter server's servers
  /// (default: one per data-parallel rank) and placement, local SGD's steps
  /// between averagings.
  std::optional<DataParallelSync> sync;
  std::optional<int64_t> servers, syncEvery;
  std::optional<ServerPlacement> placement;
};

/// The dimensions of the space that are searched at all (`--space`); a
/// dimension left out stays at its simplest value (1, off, none, 0).
struct SearchSpace {
  bool dp = true, tp = true, pp = true, sp = true, zero = true,
       recompute = true, microBatch = true;
  /// Ring all-reduce against parameter servers (colocated and dedicated,
  /// one server per data-parallel rank); off unless asked for. Local SGD
  /// changes what is trained, so it is priced only when fixed.
  bool sync = false;
};

struct SearchOptions {
  int64_t gpus = 1;
  int64_t globalBatch = 1;
  /// "f32" or "bf16" (bf16 means mixed precision training).
  std::string dtype = "bf16";
  /// Bytes per rank a plan may use.
  double memoryLimit = 0;
  SearchSpace space;
  PlanChoice fixed;
  /// Whether the data-parallel gradient reduction overlaps the backward pass
  /// of the last micro-batch (PyTorch DDP, Megatron's overlap-grad-reduce).
  bool overlapGradientReduction = true;
};

/// Memory of one rank at its peak. Parameters and optimizer state persist
/// (the update writes the next step's over them); the gradients held, the
/// saved activations kept and the temporaries are those of the moment the
/// most bytes are live: the same terms parc-compile's summary reports of
/// the compiled step's peak.
struct MemoryBreakdown {
  double parameters = 0, gradients = 0, optimizerState = 0, activations = 0,
         temporaries = 0;
  double total() const {
    return parameters + optimizerState + gradients + activations + temporaries;
  }
};

struct TimeBreakdown {
  /// Forward and backward kernels of all micro-batches on the slowest stage.
  double compute = 0;
  /// The extra forward pass of recomputation.
  double recompute = 0;
  /// Tensor-parallel collectives (on the critical path).
  double tensorParallelComm = 0;
  /// Point-to-point sends between pipeline stages.
  double pipelineComm = 0;
  /// Data-parallel gradient (and ZeRO) collectives not hidden by compute.
  double dataParallelComm = 0;
  double bubble = 0;
  double optimizer = 0;
  double total() const {
    return compute + recompute + tensorParallelComm + pipelineComm +
           dataParallelComm + bubble + optimizer;
  }
};

struct EvaluatedPlan {
  int64_t dp = 1, tp = 1, pp = 1, microBatch = 1, microbatches = 1, zero = 0,
          virtualStages = 1;
  bool sequenceParallel = false;
  Recompute recompute = Recompute::None;
  std::optional<PipelineSchedule> schedule;
  DataParallelSync sync = DataParallelSync::AllReduce;
  int64_t servers = 0, syncEvery = 1;
  ServerPlacement placement = ServerPlacement::Colocated;
  /// Bytes a data-parallel rank and the busiest rank (a parameter server)
  /// send per step to synchronize.
  double workerSyncBytes = 0, busiestSyncBytes = 0;
  /// What a ring all-reduce of the same gradients would send per rank.
  double ringSyncBytes = 0;
  std::vector<int64_t> layersPerStage;
  /// Per stage, one micro-batch's forward+backward time (with
  /// recomputation) and the point-to-point time per micro-batch.
  std::vector<double> stageMicrobatchTime;
  double pointToPointTime = 0;
  TimeBreakdown time;
  /// Memory of the stage that needs the most, and which stage that is.
  MemoryBreakdown memory;
  int64_t peakStage = 0;
  /// commBytesPerRank: what the busiest rank sends, on whichever stage.
  double stepTime = 0, tflopsPerGpu = 0, mfu = 0, commBytesPerRank = 0,
         bubbleFraction = 0;
  /// Whether parc-compile builds this plan today, and if not, why.
  bool buildable = false;
  std::string notBuildable;
  /// The static memory plan of the compiled train step, for buildable plans
  /// the planner compiled (CompileCheck.h).
  std::optional<int64_t> compiledArenaBytes;
  /// Values the compile check found laid out otherwise than the
  /// ILP chose, pinned by position ("@N") in the ILP's layout.
  std::vector<NamedSharding> layoutPins;
  const StrategySolution *strategy = nullptr;

  /// "dp=8 tp=4 pp=1 mb=2 zero=1 recompute=none sp=off", and the
  /// synchronization when it is not a ring all-reduce
  /// ("sync=parameter-server(dedicated,8)", "sync=local-sgd(4)").
  std::string describe() const;
};

struct RejectedPlan {
  std::string configuration;
  std::string reason;
};

struct SearchResult {
  /// Fastest first.
  std::vector<EvaluatedPlan> plans;

  /// The fastest plan parc-compile builds today, or null.
  const EvaluatedPlan *getFastestBuildable() const {
    for (const EvaluatedPlan &plan : plans)
      if (plan.buildable)
        return &plan;
    return nullptr;
  }
  std::vector<RejectedPlan> rejected;
  int64_t evaluated = 0;
  int64_t ilpSolves = 0;
  /// The least memory any configuration needed, and its largest term, for
  /// the message when nothing fits.
  double smallestMemory = 0;
  std::string smallestMemoryTerm;
};

/// "1.50 GiB", "12.00 KiB": bytes for people.
std::string formatBytes(double bytes);

/// Searches the plans of `graph` on `options.gpus` devices; fails with a
/// message in `error` when the options contradict each other.
FailureOr<SearchResult> searchPlans(const ModelGraph &graph,
                                    const CostModel &costs, StrategyIlp &ilp,
                                    const SearchOptions &options,
                                    std::string &error);

} // namespace mlir::parc

#endif // PARC_PLAN_SEARCH_H
