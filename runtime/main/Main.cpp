//===- Main.cpp - the main() of every compiled per-rank program -----------===//
//
// Linked with a generated object that defines parc_program_json and
// parc_program_step. Every rank parses the flags and its executable's
// program (the same on every rank, or one per pipeline stage), loads its
// slice of the arguments into the arena, runs the steps (feeding results
// named like arguments back into them: a training step's params and
// optimizer state), and rank 0 prints and writes the gathered results of
// every stage. Errors end every rank with exit code 1.
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "main/ArgumentLoader.h"
#include "main/Averaging.h"
#include "main/Feedback.h"
#include "main/Options.h"
#include "main/Program.h"
#include "main/Prologue.h"
#include "main/ResultGather.h"
#include "main/TraceFile.h"
#include "parcrt/Values.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace parcrt;

namespace {

/// Collective over all ranks: true when every rank passes `ok`. Otherwise
/// the lowest failing rank prints its `error` (one message, not one per
/// rank) and every rank returns false.
bool allSucceeded(bool ok, const std::string &error, int rank, int size) {
  int firstFailure = ok ? size : rank;
  MPI_Allreduce(MPI_IN_PLACE, &firstFailure, 1, MPI_INT, MPI_MIN,
                MPI_COMM_WORLD);
  if (firstFailure == rank)
    std::fprintf(stderr, "parc: %s\n", error.c_str());
  return firstFailure == size;
}

/// This rank's index among the ranks on its node, and their number.
struct NodePlace {
  int rank = 0, ranks = 1;
};
NodePlace placeOnNode() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  NodePlace place;
  MPI_Comm_rank(node, &place.rank);
  MPI_Comm_size(node, &place.ranks);
  MPI_Comm_free(&node);
  return place;
}

bool openFile(const std::string &path, TensorFile &file, std::string *error) {
  if (path.empty())
    return true;
  file.path = path;
  file.reader = SafetensorsReader::open(path, error);
  return file.reader != nullptr;
}

/// Loads every argument's local block into the arena.
bool loadArguments(const Program &program, const MeshInfo &mesh,
                   const TensorFile &weights, const TensorFile &inputs,
                   uint64_t seed, Backend &backend, uint8_t *arena,
                   std::string *error) {
  for (const ProgramArgument &argument : program.arguments) {
    // Carry state starts as its init (zeros) until the prologue sets it.
    const TensorFile *file = argument.role == ArgumentRole::Param ||
                                     argument.role == ArgumentRole::OptState ||
                                     argument.role == ArgumentRole::Buffer
                                 ? &weights
                             : argument.role == ArgumentRole::Carry ? nullptr
                                                                    : &inputs;
    std::vector<double> values;
    if (!argumentValues(argument, mesh, file && file->reader ? file : nullptr,
                        seed, values, error))
      return false;
    std::vector<uint8_t> bytes(values.size() * dtypeBytes(argument.dtype));
    encodeValues(values, argument.dtype, bytes.data());
    backend.toArena(arena + argument.offset, bytes.data(), bytes.size());
  }
  return true;
}

/// Why `mesh.rank` may not run this executable's pipeline stage: its
/// coordinate on the stage axis must be the stage's index. Empty when it may
/// (or the program is SPMD).
std::string stageMismatch(const Program &program, const MeshInfo &mesh) {
  if (!program.stage)
    return "";
  const PipelineStage &stage = *program.stage;
  int64_t coordinate =
      stage.meshes.empty()
          ? mesh.coordinate(stage.axis)
          : static_cast<int64_t>(stage.meshes.getStage(mesh.rank));
  if (coordinate == stage.index)
    return "";
  return "rank " + std::to_string(mesh.rank) + " has coordinate " +
         std::to_string(coordinate) + " on the stage axis '" +
         program.axisNames[stage.axis] + "' but runs the executable of stage " +
         std::to_string(stage.index) + " of " + std::to_string(stage.count) +
         " (launch the stages in order, as launch.sh does: mpirun -np N "
         "stage0 : -np N stage1 ...)";
}

/// How the trace names this rank's process: "rank 3 (stage 1)".
std::string traceProcessName(const Program &program, int rank) {
  std::string name = "rank " + std::to_string(rank);
  if (program.stage)
    name += " (stage " + std::to_string(program.stage->index) + ")";
  return name;
}

/// %.6g, but every NaN prints as "nan" (printf shows a negative one as
/// "-nan").
std::string formatScalar(double value) {
  if (std::isnan(value))
    return "nan";
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

void printSummary(const GatheredResult &result) {
  const std::vector<double> &values = result.values;
  if (result.shape.empty()) {
    std::printf("%s = %s\n", result.name.c_str(),
                formatScalar(values[0]).c_str());
    return;
  }
  std::string type = typeString(result.shape, result.dtype);
  if (values.empty()) {
    std::printf("%s: tensor<%s> (empty)\n", result.name.c_str(), type.c_str());
    return;
  }
  double sum = 0, lowest = values[0], highest = values[0];
  for (double value : values) {
    sum += value;
    lowest = std::min(lowest, value);
    highest = std::max(highest, value);
  }
  double mean = sum / values.size(), squares = 0;
  for (double value : values)
    squares += (value - mean) * (value - mean);
  std::printf("%s: tensor<%s> mean %.6g std %.6g min %.6g max %.6g\n",
              result.name.c_str(), type.c_str(), mean,
              std::sqrt(squares / values.size()), lowest, highest);
}

/// The safetensors metadata key of the last step a results file holds.
constexpr const char *stepMetadataKey = "parc.step";

/// Writes `results` to `path` (rank 0 does; true elsewhere), recording
/// `step`, so that --resume can continue from the file.
bool writeResults(const std::string &path,
                  const std::vector<GatheredResult> &results, int64_t step,
                  int rank, std::string *error) {
  if (rank != 0)
    return true;
  SafetensorsWriter writer;
  for (const GatheredResult &result : results)
    writer.add(result.name, fileDType(result.dtype), result.shape,
               result.values.data());
  writer.setMetadata(stepMetadataKey, std::to_string(step));
  return writer.write(path, error);
}

/// The step after the one `checkpoint` recorded; 0 with `error` when it
/// recorded none or one that leaves nothing of `steps` to run.
int64_t getResumedStep(const TensorFile &checkpoint, int64_t steps,
                       std::string *error) {
  const auto &metadata = checkpoint.reader->metadata();
  auto it = metadata.find(stepMetadataKey);
  uint64_t done = 0;
  if (it == metadata.end() || !parseUnsigned(it->second, done) ||
      done > maxSteps) {
    *error = "--resume: " + checkpoint.path + " records no step (\"" +
             stepMetadataKey +
             "\" metadata); write it with --checkpoint or --out";
    return 0;
  }
  if (static_cast<int64_t>(done) >= steps) {
    *error = "--resume: " + checkpoint.path + " is at step " +
             std::to_string(done) + ", so --steps " + std::to_string(steps) +
             " leaves nothing to run";
    return 0;
  }
  return static_cast<int64_t>(done) + 1;
}

int run(int argc, char **argv, int rank, int size) {
  Options options;
  std::string error;
  bool parsed = parseOptions(argc, argv, options, &error);
  if (!parsed) {
    char text[512];
    std::snprintf(text, sizeof(text), usage, argv[0]);
    error += "\n" + std::string(text);
  }
  if (!allSucceeded(parsed, error, rank, size))
    return 1;
  if (options.help) {
    if (rank == 0)
      std::printf(usage, argv[0]);
    return 0;
  }

  std::optional<Program> program = parseProgram(parc_program_json, &error);
  if (!allSucceeded(program.has_value(), error, rank, size))
    return 1;
  // Collective even though every rank fails alike: the executables of a
  // pipeline must stay in step.
  if (!allSucceeded(size == program->numRanks(),
                    "this program runs on " +
                        std::to_string(program->numRanks()) + " ranks (mesh " +
                        program->meshDescription() + ") but was launched on " +
                        std::to_string(size),
                    rank, size))
    return 1;
  MeshInfo mesh{program->axisNames, program->axisSizes, rank};
  if (program->stage) {
    mesh.stages = program->stage->meshes;
    mesh.stage = program->stage->index;
  }
  // From here every rank's collectives are watched, the set-up's too: a rank
  // stopped while it loads its arguments must not hang the others (one that
  // loads for longer than the timeout answers, and is waited for).
  Watchdog watchdog(mesh, options.timeout);
  std::vector<int> allAxes;
  for (size_t axis = 0; axis < mesh.axisSizes.size(); ++axis)
    allAxes.push_back(static_cast<int>(axis));
  auto allSucceededWatched = [&](bool ok, const std::string &why) {
    Watched watched(&watchdog, "set-up", allAxes, /*patient=*/true);
    return allSucceeded(ok, why, rank, size);
  };
  std::string mismatch = stageMismatch(*program, mesh);
  if (!allSucceededWatched(mismatch.empty(), mismatch))
    return 1;
  std::optional<ResultGather> gather;
  {
    Watched watched(&watchdog, "set-up", allAxes, /*patient=*/true);
    gather.emplace(*program, mesh);
  }
  // Results named like arguments (updated params, optimizer state, the step
  // counter) are the next step's arguments.
  std::vector<Feedback> feedback;
  if (!allSucceededWatched(findFeedback(*program, feedback, &error), error))
    return 1;

  NodePlace place = placeOnNode();
  std::unique_ptr<Backend> backend =
      options.backend == "cpu"
          ? createCpuBackend(mesh, options.threads
                                       ? options.threads
                                       : defaultThreads(place.ranks))
          : createCudaBackend(mesh, place.rank, &error);
  if (!allSucceededWatched(backend != nullptr, "rank " + std::to_string(rank) +
                                                   ": cannot use the " +
                                                   options.backend +
                                                   " backend: " + error))
    return 1;
  auto *arena = static_cast<uint8_t *>(backend->allocate(program->arenaBytes));
  if (!allSucceededWatched(
          arena != nullptr,
          "rank " + std::to_string(rank) + ": cannot allocate the " +
              std::to_string(program->arenaBytes) + "-byte arena"))
    return 1;

  TensorFile weights, inputs;
  bool loaded = openFile(options.weights, weights, &error) &&
                openFile(options.inputs, inputs, &error) &&
                loadArguments(*program, mesh, weights, inputs, options.seed,
                              *backend, arena, &error);
  int64_t firstStep = 1;
  if (loaded && options.resume) {
    firstStep = getResumedStep(weights, options.steps, &error);
    loaded = firstStep > 0;
  }
  weights.reader.reset();
  inputs.reader.reset();
  if (!allSucceededWatched(loaded, error)) {
    backend->release(arena);
    return 1;
  }

  // Created before the steps: an unwritable path fails now, not after them.
  TraceFile traceFile;
  bool writable =
      options.trace.empty() || traceFile.create(options.trace, rank, &error);
  for (auto [flag, path] :
       {std::pair<const char *, std::string *>{"--out", &options.out},
        {"--checkpoint", &options.checkpoint}})
    if (writable && rank == 0 && !path->empty() &&
        !SafetensorsWriter::checkWritable(*path, &error)) {
      writable = false;
      error = std::string(flag) + ": " + error;
    }
  if (!allSucceededWatched(writable, error)) {
    backend->release(arena);
    return 1;
  }
  std::optional<Tracer> tracer;
  if (!options.trace.empty())
    tracer.emplace(options.steps, options.backend == "cuda");

  parcrt_context context{backend.get(), arena, mesh, &watchdog,
                         tracer ? &*tracer : nullptr};
  // A stage of an asynchronous pipeline (PipeDream-2BW: no flush between
  // steps, so no rank waits for the others at a step's end) sets its carry
  // state first (not traced: the trace is of steps).
  bool asynchronous = parc_prologue_json && parc_prologue_step;
  if (asynchronous) {
    bool restartable = !options.resume && options.checkpointEvery == 0;
    std::optional<Program> prologue;
    if (restartable)
      prologue = loadPrologue(parc_prologue_json, *program, &error);
    std::string why =
        restartable
            ? "rank " + std::to_string(rank) + ": " + error
            : "--checkpoint and --resume do not work with PipeDream-2BW yet: "
              "its carry state (the stale weights and the activations "
              "between steps) is not in checkpoints";
    bool ran = prologue.has_value();
    if (ran) {
      parcrt_context untraced = context;
      untraced.tracer = nullptr;
      ran = runPrologue(*prologue, parc_prologue_step, *program, untraced,
                        &error);
      why = "rank " + std::to_string(rank) + ": " + error;
    }
    if (!allSucceededWatched(ran, why)) {
      backend->release(arena);
      return 1;
    }
  }
  // Step times exclude the per-step printing; the first step warms caches
  // and communicators and is left out of the mean when there are others.
  std::vector<double> measuredSeconds;
  // Scalars that feed back (a step counter) are state, not metrics.
  std::vector<size_t> metrics, allResults;
  for (size_t i = 0; i < program->results.size(); ++i) {
    if (program->isCarryResult(i))
      continue;
    allResults.push_back(i);
    if (program->results[i].globalShape.empty() && !feedsBack(feedback, i))
      metrics.push_back(i);
  }
  // Prints step `step`'s metrics (rank 0) and decides for every rank
  // whether training stops: when one is not finite (a collective).
  auto reportStep = [&](int64_t step) {
    std::vector<GatheredResult> stepMetrics;
    const GatheredResult *nonfinite = nullptr;
    int stop = 0;
    {
      // Every rank takes part: one that stopped would hang the others.
      Watched watched(&watchdog, "result gather", allAxes);
      stepMetrics = gather->gather(metrics, *backend, arena);
      for (const GatheredResult &metric : stepMetrics)
        if (!nonfinite && !std::isfinite(metric.values[0]))
          nonfinite = &metric;
      // Only rank 0 holds the gathered values: it decides for every rank,
      // so that all stop at the same step.
      stop = nonfinite && !options.allowNonfinite;
      MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    for (const GatheredResult &metric : stepMetrics)
      std::printf("step %lld: %s = %s\n", static_cast<long long>(step),
                  metric.name.c_str(), formatScalar(metric.values[0]).c_str());
    if (rank == 0)
      std::fflush(stdout);
    // No --out (it would hold the diverged weights), no trace.
    if (stop && rank == 0)
      std::fprintf(stderr,
                   "parc: the %s became %s at step %lld; stopping (pass "
                   "--allow-nonfinite to continue)\n",
                   nonfinite->name.c_str(),
                   formatScalar(nonfinite->values[0]).c_str(),
                   static_cast<long long>(step));
    return stop != 0;
  };
  std::vector<std::vector<uint8_t>> deferredMetrics;
  if (tracer) {
    // The ranks' common time origin, up to the barrier's skew.
    MPI_Barrier(MPI_COMM_WORLD);
    tracer->start();
  }
  for (int64_t step = firstStep; step <= options.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    if (tracer)
      tracer->beginStep(static_cast<int32_t>(step));
    parc_program_step(&context);
    // Pending sends wait for their receivers: watched, naming the peer.
    backend->communicator().synchronize(&watchdog);
    backend->synchronize();
    if (averagesAfter(*program, step)) {
      std::vector<int> replicaAxis = {program->localSgd->axis};
      Watched watched(&watchdog, "local SGD averaging", replicaAxis);
      averageReplicas(*program, feedback, *backend, arena);
    }
    if (!feedback.empty()) {
      applyFeedback(*program, feedback, *backend, arena);
      backend->synchronize();
    }
    if (tracer)
      tracer->endStep();
    if (step > firstStep || options.steps == firstStep)
      measuredSeconds.push_back(std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - start)
                                    .count());
    if (!asynchronous) {
      if (reportStep(step)) {
        backend->release(arena);
        return 1;
      }
    } else {
      // Gathering would make every rank wait for the last stage's loss at
      // the end of each step: the flush an asynchronous pipeline does not
      // have. The metrics' blocks are kept and reported after the steps.
      std::vector<uint8_t> &blocks = deferredMetrics.emplace_back();
      for (size_t index : metrics) {
        const BoundaryTensor &result = program->results[index];
        size_t bytes = result.localElements() * dtypeBytes(result.dtype);
        size_t at = blocks.size();
        blocks.resize(at + bytes);
        backend->fromArena(blocks.data() + at, arena + result.offset, bytes);
      }
    }
    if (options.checkpointEvery && step % options.checkpointEvery == 0) {
      std::vector<GatheredResult> state;
      {
        Watched watched(&watchdog, "checkpoint gather", allAxes);
        state = gather->gather(allResults, *backend, arena);
      }
      bool written =
          writeResults(options.checkpoint, state, step, rank, &error);
      if (!allSucceeded(written, "--checkpoint: " + error, rank, size)) {
        backend->release(arena);
        return 1;
      }
    }
  }

  // An asynchronous pipeline reports its steps now; a non-finite metric
  // still stops the run before --out is written.
  for (size_t i = 0; i < deferredMetrics.size(); ++i) {
    size_t at = 0;
    for (size_t index : metrics) {
      const BoundaryTensor &result = program->results[index];
      size_t bytes = result.localElements() * dtypeBytes(result.dtype);
      backend->toArena(arena + result.offset, deferredMetrics[i].data() + at,
                       bytes);
      at += bytes;
    }
    if (reportStep(firstStep + static_cast<int64_t>(i))) {
      backend->release(arena);
      return 1;
    }
  }

  if (tracer &&
      !allSucceeded(
          traceFile.write(
              tracer->format(mesh, traceProcessName(*program, rank)), &error),
          error, rank, size)) {
    backend->release(arena);
    return 1;
  }

  // Each step's time is the slowest rank's: a rank whose steps never wait
  // for the others (no collective in the step) would otherwise report its
  // own core's speed, and a synchronized program runs at the slowest rank's.
  // The median beside the mean shows a step slowed by another tenant of a
  // shared host, which the mean takes in.
  MPI_Allreduce(MPI_IN_PLACE, measuredSeconds.data(),
                static_cast<int>(measuredSeconds.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  if (rank == 0) {
    double total = 0;
    for (double seconds : measuredSeconds)
      total += seconds;
    std::vector<double> sorted = measuredSeconds;
    std::sort(sorted.begin(), sorted.end());
    size_t half = sorted.size() / 2;
    double median = sorted.size() % 2
                        ? sorted[half]
                        : (sorted[half - 1] + sorted[half]) / 2;
    std::printf("step time: %.6f s (mean of %zu; median %.6f s)\n",
                total / sorted.size(), sorted.size(), median);
  }

  std::vector<GatheredResult> results;
  {
    Watched watched(&watchdog, "result gather", allAxes);
    results = gather->gather(allResults, *backend, arena);
  }
  for (const GatheredResult &result : results)
    printSummary(result);
  std::fflush(stdout);
  backend->release(arena);
  bool written =
      options.out.empty() ||
      writeResults(options.out, results, options.steps, rank, &error);
  return allSucceeded(written, error, rank, size) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  // The watchdog aborts from its own thread while the main one may be
  // inside MPI.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = run(argc, argv, rank, size);
  MPI_Finalize();
  return code;
}
