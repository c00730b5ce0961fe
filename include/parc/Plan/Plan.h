//===- Plan.h - plan.json as one data structure -----------------*- C++ -*-===//
//
// A plan is the contract between parc-plan, which writes it, and
// parc-compile, which builds it; a plan written by hand is valid input too.
// Every tool reads and writes it through readPlan and writePlan. Only `mesh`
// is required; the reader rejects unknown and duplicate keys, values of the
// wrong type or out of range, and axis names the mesh lacks, each with its
// line:column.
//
// Worked example: the file
//
//   { "mesh": { "dp": 2, "tp": 2 },
//     "shardings": { "x": [["dp"], []], "fc1.weight": [[], ["tp"]] },
//     "zero": 1 }
//
// reads as
//
//   plan.mesh      = [{dp, 2}, {tp, 2}]          plan.getNumRanks() = 4
//   plan.shardings = [{x, [[dp], []]}, {fc1.weight, [[], [tp]]}]
//   plan.zero      = 1, every other part unset,
//
// and writePlan prints it back with two-space indentation, the keys in the
// order of the struct below, and the unset parts left out.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_PLAN_H
#define PARC_PLAN_PLAN_H

#include "parc/Plan/StrictJson.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::parc {

/// The most ranks a mesh may have.
constexpr int64_t kMaxPlanRanks = int64_t(1) << 31;

struct MeshAxis {
  std::string name;
  /// At least 1.
  int64_t size = 1;
  /// Where the reader found the axis's name (unknown for a plan built in
  /// code); not written.
  json::Location location;
};

/// The sharding of one value, by its `parc.name`: per tensor dimension the
/// mesh axes that split it (`[]` = whole).
struct NamedSharding {
  std::string name;
  std::vector<std::vector<std::string>> dims;
  /// Where the reader found the name; not written.
  json::Location location;
};

/// PipeDream2BW is asynchronous (no flush between steps, one-step-stale
/// gradients); the others are synchronous.
enum class PipelineSchedule {
  GPipe,
  OneFOneB,
  Interleaved1F1B,
  ZeroBubbleH1,
  PipeDream2BW
};
/// "gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "pipedream-2bw".
llvm::StringRef getPipelineScheduleName(PipelineSchedule schedule);
/// The schedule spelled `name`, if any.
std::optional<PipelineSchedule> parsePipelineScheduleName(llvm::StringRef name);

struct PipelinePlan {
  /// The mesh axis whose ranks are the stages.
  std::string axis;
  /// At least 1.
  std::optional<int64_t> microbatches;
  std::optional<PipelineSchedule> schedule;
  /// Model chunks per stage (interleaved schedules); at least 1.
  std::optional<int64_t> virtualStages;
  /// Layers of each stage; each at least 0. Unset: derived.
  std::optional<std::vector<int64_t>> layersPerStage;
};

enum class Recompute { None, Selective, Full };
/// "none", "selective", "full".
llvm::StringRef getRecomputeName(Recompute recompute);

enum class Precision { F32, BF16Mixed, F16Mixed };
/// "f32", "bf16-mixed".
llvm::StringRef getPrecisionName(Precision precision);

struct BatchPlan {
  /// Samples per optimizer step over all ranks; at least 1.
  std::optional<int64_t> global;
  /// Samples per micro-batch; at least 1.
  std::optional<int64_t> micro;
};

/// AllReduce settles every gradient each step; ParameterServer pushes each
/// gradient to the servers owning its parts, which update them, and pulls
/// the new values; LocalSgd trains one replica per data-parallel rank on
/// its shard of the batch and averages the replicas every `syncEvery` steps
/// (parameter averaging).
enum class DataParallelSync { AllReduce, ParameterServer, LocalSgd };
/// "allreduce", "parameter-server", "local-sgd".
llvm::StringRef getDataParallelSyncName(DataParallelSync sync);

/// Where a parameter server's servers run: on the data-parallel ranks
/// themselves, or on ranks of their own.
enum class ServerPlacement { Colocated, Dedicated };
/// "colocated", "dedicated".
llvm::StringRef getServerPlacementName(ServerPlacement placement);

struct DataParallelPlan {
  std::optional<DataParallelSync> sync;
  /// Parameter server: how many servers (at least 1; colocated: at most
  /// the data-parallel ranks, which is the default) and where they run.
  std::optional<int64_t> servers;
  std::optional<ServerPlacement> placement;
  /// Local SGD: steps between averagings; at least 1.
  std::optional<int64_t> syncEvery;
  /// Local SGD: whether the optimizer state is averaged with the
  /// parameters (and buffers, which always are).
  std::optional<bool> averageOptimizerState;
  /// Whether batch normalization uses the whole batch's statistics
  /// (SyncBatchNorm's) rather than each data-parallel rank's (PyTorch DDP's,
  /// the default).
  std::optional<bool> syncBatchNorm;
};

/// The planner's prediction of memory per rank, in bytes; each at least 0.
struct MemoryPrediction {
  std::optional<double> parameters;
  std::optional<double> gradients;
  std::optional<double> optimizerState;
  std::optional<double> activations;
  std::optional<double> temporaries;
};

/// What the planner predicts for one training step; each at least 0.
struct Prediction {
  std::optional<double> stepTimeS;
  std::optional<double> tflopsPerGpu;
  std::optional<double> mfu;
  /// The rank that needs the most memory, and the one that sends the most
  /// (on different pipeline stages, possibly).
  std::optional<double> peakMemoryBytesPerRank;
  std::optional<double> commBytesPerRank;
  std::optional<double> bubbleFraction;
  std::optional<MemoryPrediction> memory;
};

/// How the planner came to the plan.
struct PlannerInfo {
  /// The cluster's name.
  std::optional<std::string> cluster;
  /// At least 1.
  std::optional<int64_t> gpus;
  /// Whether parc-compile builds every part of the plan today.
  std::optional<bool> buildable;
  /// Omitted when empty.
  std::vector<std::string> notes;
};

/// Where the reader found the parts that parc-compile may reject (unknown
/// for a plan built in code); not written.
struct PlanLocations {
  json::Location mesh;
  json::Location sequenceParallel;
  json::Location pipeline;
  json::Location zero;
  json::Location recompute;
  json::Location recomputeLayers;
  json::Location precision;
  json::Location dataParallel;
};

struct Plan {
  /// In the order of the file: the last axis is minor. Never empty.
  std::vector<MeshAxis> mesh;
  /// In the order of the file; omitted when empty.
  std::vector<NamedSharding> shardings;
  std::optional<bool> sequenceParallel;
  std::optional<PipelinePlan> pipeline;
  /// ZeRO stage, 0 to 3.
  std::optional<int64_t> zero;
  std::optional<Recompute> recompute;
  /// The layers that recompute; each at least 0. Unset: derived.
  std::optional<std::vector<int64_t>> recomputeLayers;
  std::optional<Precision> precision;
  std::optional<BatchPlan> batch;
  std::optional<DataParallelPlan> dataParallel;
  std::optional<Prediction> predicted;
  std::optional<PlannerInfo> planner;

  PlanLocations locations;

  /// The product of the mesh's sizes (at most kMaxPlanRanks).
  int64_t getNumRanks() const;
  /// The size of mesh axis `name`, or nullopt.
  std::optional<int64_t> getAxisSize(llvm::StringRef name) const;
};

/// Reads plan.json text. Errors are json::ReadErrors, "FILE:LINE:COL:
/// MESSAGE".
llvm::Expected<Plan> readPlan(llvm::StringRef text, llvm::StringRef fileName);

/// The plan as JSON text (the mesh must not be empty); readPlan reads it back
/// to the same plan, and writing that again gives the same text.
std::string writePlan(const Plan &plan);

} // namespace mlir::parc

#endif // PARC_PLAN_PLAN_H
