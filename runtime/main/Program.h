//===- Program.h - the description a compiled program embeds ---*- C++ -*-===//
//
// parc-compile embeds a JSON document (`parc_program_json`, specified in
// docs/runtime.md) that tells the launcher the mesh, the arena size, the
// pipeline stage of an MPMD executable, and per argument and result its
// name, dtype, shapes, sharding and arena offset.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_PROGRAM_H
#define PARCRT_MAIN_PROGRAM_H

#include "parc/Support/MeshArithmetic.h"
#include "parcrt/Init.h"
#include "parcrt/parcrt.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parcrt {

/// A tensor that crosses the program's boundary, as one rank holds it.
struct BoundaryTensor {
  std::string name;
  parcrt_dtype dtype = PARCRT_F32;
  std::vector<int64_t> globalShape, localShape;
  /// Per dimension, the mesh axis positions that split it, major first.
  std::vector<std::vector<int>> sharding;
  /// Mesh axis positions over which the ranks hold addends (results only).
  std::vector<int> partial;
  int64_t offset = 0;

  int64_t localElements() const;
  int64_t globalElements() const;
};

/// Params and optimizer state (optstate) come from --weights; inputs and
/// labels from --inputs; carry tensors (rank-local state of an asynchronous
/// pipeline) from the prologue.
enum class ArgumentRole { Input, Param, Label, OptState, Buffer, Carry };

struct ProgramArgument : BoundaryTensor {
  ArgumentRole role = ArgumentRole::Input;
  std::optional<InitSpec> init;
  /// The shape of the tensor in checkpoint files when it differs (same
  /// row-major elements).
  std::optional<std::vector<int64_t>> checkpointShape;
  /// The argument whose start this one's start is, read in this one's dtype
  /// (an f32 master copy of a bf16 parameter); empty when none.
  std::string initFrom;

  /// The init its values come from when no file holds it: `init`, else
  /// normal(0, 0.02) for params and normal(0, 1) for the rest (for a copy,
  /// its source's, as the program reader sets it).
  InitSpec getStartingInit() const;
};

/// The stage an MPMD executable runs (a pipeline stage; the workers or the
/// dedicated parameter servers): its ranks are exactly those
/// whose coordinate on mesh axis `axis` is `index`.
struct PipelineStage {
  int axis = 0;
  int64_t index = 0, count = 1;
  /// Every stage's mesh when they differ (the stage axis is then the first,
  /// see parc::StagedMeshes); empty when all stages share the program's.
  parc::StagedMeshes meshes;
};

/// Local SGD: each coordinate of mesh axis `axis` trains a replica, and
/// every `syncEvery` steps the runner averages the replicas' parameters and
/// buffers (and optimizer state when `averageOptimizerState`).
struct LocalSgd {
  int axis = 0;
  int64_t syncEvery = 1;
  bool averageOptimizerState = false;
};

struct Program {
  std::string function;
  std::vector<std::string> axisNames;
  std::vector<int64_t> axisSizes;
  int64_t arenaBytes = 0;
  std::vector<ProgramArgument> arguments;
  std::vector<BoundaryTensor> results;
  /// Absent for an SPMD program (one executable on every rank).
  std::optional<PipelineStage> stage;
  std::optional<LocalSgd> localSgd;

  /// Whether result `index` is carry state (named like a carry argument):
  /// fed back on its rank, never gathered or written.
  bool isCarryResult(size_t index) const;

  /// The world's ranks: every stage's.
  int64_t numRanks() const;
  /// "dp=2, tp=2" ("no axes" for a single rank without a mesh); stages on
  /// meshes of their own, each stage's mesh and ranks.
  std::string meshDescription() const;
};

/// Parses and validates `json`. Returns nullopt with `error` set, naming the
/// offending field, when the document is malformed or inconsistent.
std::optional<Program> parseProgram(const char *json, std::string *error);

/// "2x3xf32" style spelling of a shape and dtype.
std::string typeString(const std::vector<int64_t> &shape, parcrt_dtype dtype);

} // namespace parcrt

#endif // PARCRT_MAIN_PROGRAM_H
