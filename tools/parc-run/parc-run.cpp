//===- parc-run.cpp - runs a model with the reference evaluator -----------===//
//
//   parc-run --reference model.mlir [--weights w.safetensors]
//            [--inputs batch.safetensors] [--seed N] [--out results.safetensors]
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Import/ModelFile.h"
#include "parc/Interp/EvaluableOpInterface.h"
#include "parc/Interp/Evaluator.h"
#include "parc/Interp/ModelData.h"
#include "parc/Interp/ShardedTensors.h"
#include "parc/Transforms/StageMeshes.h"

#include "dist/IR/DistDialect.h"
#include "parc/Interp/CollectiveEvaluableOpInterface.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
namespace cl = llvm::cl;

static cl::OptionCategory category("parc-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir | model.onnx>"),
    cl::cat(category));
static cl::opt<bool> reference(
    "reference", cl::desc("Run with the reference evaluator (compiled "
                          "programs run through parc-compile's launch.sh)"),
    cl::Required,
    cl::cat(category));
static cl::opt<std::string> weightsFile(
    "weights", cl::desc("safetensors file with values of param arguments"),
    cl::cat(category));
static cl::opt<std::string> inputsFile(
    "inputs", cl::desc("safetensors file with values of input and label "
                       "arguments"),
    cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the deterministic "
                                               "initialization"),
                              cl::init(0),
    cl::cat(category));
static cl::opt<std::string> outFile(
    "out", cl::desc("Write the results to this safetensors file"),
    cl::cat(category));
static cl::opt<std::string> weightsOut(
    "weights-out",
    cl::desc("Write the parameters and optimizer state as they enter the "
             "first step (initialized, or read from --weights) to this "
             "safetensors file"),
    cl::cat(category));
static cl::opt<std::string> funcName(
    "func", cl::desc("Function to run (default: @forward, or the only one)"),
    cl::cat(category));
static cl::opt<bool> simulateRanks(
    "simulate-ranks",
    cl::desc("Run a partitioned function on every rank of its mesh in one "
             "process with exact collectives; arguments are sliced from the "
             "global tensors and results assembled back"),
    cl::cat(category));
static cl::opt<unsigned> steps(
    "steps",
    cl::desc("Run the function this many times; results named like "
             "arguments (a train step's parameters and optimizer state) feed "
             "the next step"),
    cl::init(1), cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("f32 (default: every result rounded to its element type) or f64"),
    cl::init("f32"), cl::cat(category));

static cl::opt<unsigned> replicas(
    "replicas",
    cl::desc("Simulate local SGD serially: this many replicas of the train "
             "step, which is written at one replica's batch, each stepping on "
             "its shard of a batch that many times larger (inputs and labels "
             "drawn or read at that size and split along their first "
             "dimension); the loss printed is the replicas' mean, the "
             "results replica 0's"),
    cl::init(0), cl::cat(category));
static cl::opt<unsigned> syncEvery(
    "sync-every",
    cl::desc("With --replicas: average the replicas' parameters and buffers "
             "after every this many steps"),
    cl::init(1), cl::cat(category));
static cl::opt<bool> averageOptimizerState(
    "average-optimizer-state",
    cl::desc("With --replicas: average the optimizer state too"),
    cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "parc-run: " << message << "\n";
  return 1;
}

/// Loads `path` (if given) and checks that each tensor names an argument of
/// one of `roles`; other tensors are reported and ignored.
static LogicalResult loadTensors(StringRef path, StringRef option,
                                 ArrayRef<ModelArgument> arguments,
                                 ArrayRef<ArgumentRole> roles,
                                 llvm::StringMap<interp::Tensor> &given) {
  if (path.empty())
    return success();
  llvm::Expected<llvm::StringMap<interp::Tensor>> tensors =
      interp::readTensorFile(path);
  if (!tensors) {
    fail(llvm::toString(tensors.takeError()));
    return failure();
  }
  for (auto &entry : *tensors) {
    const ModelArgument *argument = llvm::find_if(
        arguments, [&](const ModelArgument &a) { return a.name == entry.getKey(); });
    if (argument == arguments.end() || !llvm::is_contained(roles, argument->role)) {
      llvm::errs() << "parc-run: note: " << option << " " << path
                   << ": ignoring tensor '" << entry.getKey()
                   << "', which names no argument of this kind\n";
      continue;
    }
    given[entry.getKey()] = std::move(entry.getValue());
  }
  return success();
}

static void printResult(StringRef name, Type type,
                        const interp::Tensor &tensor) {
  llvm::outs() << name;
  if (tensor.getRank() == 0) {
    llvm::outs() << " = " << llvm::format("%.6g", tensor.values[0]) << "\n";
    return;
  }
  double sum = 0, squares = 0, low = INFINITY, high = -INFINITY;
  for (double value : tensor.values) {
    sum += value;
    squares += value * value;
    // A NaN anywhere makes every statistic NaN.
    low = std::isnan(value) || std::isnan(low) ? NAN : std::min(low, value);
    high = std::isnan(value) || std::isnan(high) ? NAN : std::max(high, value);
  }
  double count = std::max<int64_t>(tensor.getNumElements(), 1);
  double mean = sum / count;
  double std = std::isnan(mean)
                   ? mean
                   : std::sqrt(std::max(0.0, squares / count - mean * mean));
  llvm::outs() << ": " << type << " mean " << llvm::format("%.6g", mean)
               << " std " << llvm::format("%.6g", std) << " min "
               << llvm::format("%.6g", low) << " max "
               << llvm::format("%.6g", high) << "\n";
}

/// What runs on the simulated ranks: one partitioned function, or one per
/// pipeline stage (the rank's coordinate on the pipeline axis picks it).
/// `arguments` are the global arguments of all functions by name (index:
/// position in the list), `resultNames` their results, each taken from the
/// first function that returns it.
/// An asynchronous pipeline also has a prologue per stage, which sets the
/// stage's `carry` arguments: rank-local state, never sliced or assembled.
struct SimulatedProgram {
  SmallVector<func::FuncOp> functions;
  /// Each function's own mesh (partitioned functions only).
  SmallVector<interp::MeshLayout> functionMeshes;
  SmallVector<func::FuncOp> prologues;
  std::string stageAxis;
  SmallVector<ModelArgument> arguments;
  /// The position in `arguments` of each argument name.
  llvm::StringMap<unsigned> positionOf;
  llvm::StringSet<> carryNames;
  SmallVector<std::string> resultNames;
  SmallVector<Type> resultTypes;
};

/// Each rank's `carry` tensors by name.
using CarryState = SmallVector<llvm::StringMap<interp::Tensor>>;

static dist::ShardingAttr shardingOf(DictionaryAttr attrs) {
  return attrs ? attrs.getAs<dist::ShardingAttr>(
                     dist::DistDialect::kShardingAttrName)
               : dist::ShardingAttr();
}

/// Collects the global arguments and the results of `program.functions`.
static LogicalResult describeProgram(SimulatedProgram &program,
                                     const interp::MeshLayout *mesh) {
  llvm::StringSet<> seenResults;
  // Each stage's executable feeds only its own next step: a stage that takes
  // an argument the step updates must return the new value itself (the
  // simulation passes values between steps globally and would hide it).
  llvm::StringSet<> updated;
  for (func::FuncOp func : program.functions)
    for (const std::string &name : getResultNames(func))
      updated.insert(name);
  if (program.functions.size() > 1)
    for (func::FuncOp func : program.functions) {
      SmallVector<std::string> returned = getResultNames(func);
      for (unsigned index = 0; index < func.getNumArguments(); ++index) {
        auto name = func.getArgAttrOfType<StringAttr>(
            index, ParcDialect::kNameAttrName);
        if (name && updated.contains(name.getValue()) &&
            !llvm::is_contained(returned, name.getValue().str())) {
          func.emitError() << "takes '" << name.getValue()
                           << "', which the step updates, but does not "
                              "return its next value";
          return failure();
        }
      }
    }
  for (func::FuncOp func : program.functions) {
    FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
    if (failed(arguments))
      return failure();
    for (ModelArgument &argument : *arguments) {
      if (argument.role == ArgumentRole::Carry) {
        program.carryNames.insert(argument.name);
        continue;
      }
      if (mesh) {
        auto sharding = func.getArgAttrOfType<dist::ShardingAttr>(
            argument.index, dist::DistDialect::kShardingAttrName);
        if (!sharding) {
          fail("argument '" + argument.name + "' has no dist.sharding");
          return failure();
        }
        for (Attribute dim : sharding.getDims())
          for (StringRef axis :
               cast<ArrayAttr>(dim).getAsValueRange<StringAttr>())
            if (!llvm::is_contained(mesh->getAxisNames(), axis)) {
              fail("argument '" + argument.name + "' is sharded over axis '" +
                   axis + "', which its mesh does not have");
              return failure();
            }
        argument.type = RankedTensorType::get(
            interp::getGlobalShape(
                argument.type.getShape(), sharding,
                program.functionMeshes[llvm::find(program.functions, func) -
                                       program.functions.begin()]),
            argument.type.getElementType());
      }
      auto [it, inserted] = program.positionOf.try_emplace(
          argument.name, program.arguments.size());
      if (!inserted)
        continue;
      argument.index = program.arguments.size();
      program.arguments.push_back(argument);
    }
    for (auto [name, type] :
         llvm::zip_equal(getResultNames(func), func.getResultTypes()))
      if (!program.carryNames.contains(name) &&
          seenResults.insert(name).second) {
        program.resultNames.push_back(name);
        program.resultTypes.push_back(type);
      }
  }
  return success();
}

/// A prologue (which runs on the step functions' arguments and sets their
/// carry state) must take only arguments of the steps, sharded, and return
/// only their carry state.
static LogicalResult checkPrologue(const SimulatedProgram &program,
                                   func::FuncOp prologue) {
  FailureOr<SmallVector<ModelArgument>> arguments =
      readModelArguments(prologue);
  if (failed(arguments))
    return failure();
  for (const ModelArgument &argument : *arguments) {
    if (!program.positionOf.count(argument.name))
      return prologue.emitError()
             << "takes '" << argument.name
             << "', which is no argument of the stage functions";
    if (!prologue.getArgAttrOfType<dist::ShardingAttr>(
            argument.index, dist::DistDialect::kShardingAttrName))
      return prologue.emitError() << "argument '" << argument.name
                                  << "' has no dist.sharding";
  }
  for (const std::string &name : getResultNames(prologue))
    if (!program.carryNames.contains(name))
      return prologue.emitError()
             << "returns '" << name
             << "', which is no carry argument of the stage functions";
  return success();
}

/// Runs `functions` (one per stage) on every rank of `mesh`: slices the
/// global arguments for every rank (`carry` ones come from that rank's
/// `carry` state, which their results then update) and assembles each global
/// result from the parts of the ranks that return it.
static FailureOr<SmallVector<interp::Tensor>>
runOnMesh(const SimulatedProgram &program, ArrayRef<func::FuncOp> functions,
          const interp::MeshLayout &mesh, ArrayRef<interp::Tensor> globals,
          CarryState &carry, interp::Precision mode) {
  auto stageOf = [&](int64_t rank) -> size_t {
    return functions.size() == 1 ? 0
                                 : mesh.getCoordinate(rank, program.stageAxis);
  };
  SmallVector<func::FuncOp> rankFunctions;
  SmallVector<SmallVector<interp::Tensor>> rankArguments(mesh.getNumRanks());
  for (int64_t rank = 0; rank < mesh.getNumRanks(); ++rank) {
    func::FuncOp func = functions[stageOf(rank)];
    rankFunctions.push_back(func);
    for (auto [index, argument] : llvm::enumerate(func.getArguments())) {
      auto name =
          func.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
      if (program.carryNames.contains(name.getValue())) {
        auto type = cast<RankedTensorType>(argument.getType());
        auto it = carry[rank].find(name.getValue());
        rankArguments[rank].push_back(it != carry[rank].end()
                                          ? it->second
                                          : interp::Tensor(type.getShape()));
        continue;
      }
      rankArguments[rank].push_back(interp::sliceForRank(
          globals[program.positionOf.lookup(name.getValue())],
          shardingOf(func.getArgAttrDict(index)), mesh, rank));
    }
  }
  FailureOr<SmallVector<SmallVector<interp::Tensor>>> rankResults =
      interp::evaluateRanks(rankFunctions, mesh, rankArguments, mode);
  if (failed(rankResults))
    return failure();
  for (int64_t rank = 0; rank < mesh.getNumRanks(); ++rank)
    for (auto [index, name] :
         llvm::enumerate(getResultNames(rankFunctions[rank])))
      if (program.carryNames.contains(name))
        carry[rank][name] = (*rankResults)[rank][index];
  SmallVector<interp::Tensor> results;
  for (const std::string &name : program.resultNames) {
    // The first function (stage) that returns it; every rank of another
    // stage stands in with its peer on that stage.
    for (auto [stage, stageFunc] : llvm::enumerate(functions)) {
      func::FuncOp func = stageFunc;
      SmallVector<std::string> names = getResultNames(func);
      auto found = llvm::find(names, name);
      if (found == names.end())
        continue;
      unsigned index = found - names.begin();
      dist::ShardingAttr sharding = shardingOf(func.getResultAttrDict(index));
      if (!sharding)
        return func.emitError() << "result #" << index
                                << " has no dist.sharding";
      // Every rank of the stage's mesh, one of another stage standing in
      // with its peer on this one.
      const interp::MeshLayout &stageMesh = program.functionMeshes[stage];
      SmallVector<interp::Tensor> parts;
      for (int64_t rank = 0; rank < stageMesh.getNumRanks(); ++rank) {
        int64_t owner =
            functions.size() == 1
                ? rank
                : mesh.getWorldRank(stage, stageMesh.getRankWithCoordinate(
                                               rank, program.stageAxis, stage));
        parts.push_back((*rankResults)[owner][index]);
      }
      results.push_back(interp::assembleFromRanks(parts, sharding, stageMesh));
      break;
    }
  }
  return results;
}

/// The most replicas --replicas simulates (each a copy of the model).
constexpr unsigned kMaxReplicas = 1024;

static bool isData(ArgumentRole role) {
  return role == ArgumentRole::Input || role == ArgumentRole::Label;
}

/// Local SGD's serial simulation (--replicas): `arguments` are the train
/// step's, written at one replica's batch; `drawn` their values, with the
/// inputs and labels of all replicas' batches joined along dimension 0.
/// Returns replica 0's results of the last step, its scalar metrics
/// replaced by the replicas' mean.
static FailureOr<SmallVector<interp::Tensor>>
runReplicas(func::FuncOp func, ArrayRef<ModelArgument> arguments,
            const SmallVector<interp::Tensor> &drawn,
            ArrayRef<std::optional<unsigned>> feedsBack,
            ArrayRef<std::string> names, interp::Precision mode) {
  llvm::DenseMap<unsigned, const ModelArgument *> byIndex;
  for (const ModelArgument &argument : arguments)
    byIndex[argument.index] = &argument;
  // Each replica's values: its block of the data, its copy of the rest.
  SmallVector<SmallVector<interp::Tensor>> values(replicas);
  for (unsigned r = 0; r < replicas; ++r)
    for (auto [index, value] : llvm::enumerate(drawn)) {
      const ModelArgument *argument = byIndex.lookup(index);
      if (!argument || !isData(argument->role)) {
        values[r].push_back(value);
        continue;
      }
      int64_t shard = argument->type.getNumElements();
      values[r].push_back(interp::Tensor(
          argument->type.getShape(),
          std::vector<double>(value.values.begin() + r * shard,
                              value.values.begin() + (r + 1) * shard)));
    }
  // The arguments whose next values the replicas average.
  auto isAveraged = [&](unsigned index) {
    return isAveragedByLocalSgd(*byIndex.lookup(index), averageOptimizerState);
  };
  SmallVector<interp::Tensor> last;
  for (unsigned step = 1; step <= steps; ++step) {
    SmallVector<SmallVector<interp::Tensor>> results;
    for (unsigned r = 0; r < replicas; ++r) {
      FailureOr<SmallVector<interp::Tensor>> result =
          interp::evaluateFunction(func, values[r], mode);
      if (failed(result))
        return failure();
      results.push_back(std::move(*result));
    }
    bool average = step % syncEvery == 0;
    for (auto [index, name] : llvm::enumerate(names)) {
      if (std::optional<unsigned> argument = feedsBack[index]) {
        if (average && isAveraged(*argument)) {
          std::vector<double> &mean = results[0][index].values;
          for (unsigned r = 1; r < replicas; ++r)
            for (auto [sum, value] :
                 llvm::zip_equal(mean, results[r][index].values))
              sum += value;
          for (double &sum : mean)
            sum /= replicas;
          for (unsigned r = 1; r < replicas; ++r)
            results[r][index].values = mean;
        }
        for (unsigned r = 0; r < replicas; ++r)
          values[r][*argument] = results[r][index];
      } else if (results[0][index].getRank() == 0) {
        double sum = 0;
        for (unsigned r = 0; r < replicas; ++r)
          sum += results[r][index].values[0];
        results[0][index].values[0] = sum / replicas;
        if (steps > 1)
          llvm::outs() << "step " << step << ": " << name << " = "
                       << llvm::format("%.6g", sum / replicas) << "\n";
      }
    }
    last = std::move(results[0]);
  }
  return last;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "parc reference runner\n");
  if (steps < 1)
    return fail("--steps must be at least 1");
  if (precision != "f32" && precision != "f64")
    return fail("--precision must be f32 or f64, got '" + precision + "'");

  DialectRegistry registry;
  registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect>();
  interp::registerEvaluableOpInterfaceModels(registry);
  interp::registerCollectiveEvaluableOpInterfaceModels(registry);
  MLIRContext context(registry);
  // A failing op is named with its location; printing it too would bury
  // the message under the whole function.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // A .onnx model is imported (its dynamic dimensions must be fixed in the
  // model: parc-translate --input-shape does that) and brings its weights;
  // --weights overrides them by name.
  SmallVector<OnnxWeight> onnxWeights;
  OwningOpRef<ModuleOp> module =
      loadModel(inputFile, sourceMgr, &context, &onnxWeights);
  if (!module)
    return 1;
  // A pipelined module runs its stage functions, one per pipeline
  // coordinate; otherwise one function runs.
  SimulatedProgram program;
  FailureOr<SmallVector<func::FuncOp>> stages = getStageFunctions(*module);
  if (failed(stages))
    return 1;
  program.functions = std::move(*stages);
  for (func::FuncOp stage : program.functions)
    if (func::FuncOp prologue = getPrologue(stage))
      program.prologues.push_back(prologue);
  if (program.functions.empty() || funcName.getNumOccurrences()) {
    func::FuncOp func = findModelFunction(*module, funcName);
    if (!func)
      return fail(funcName.getNumOccurrences()
                      ? "no function @" + funcName + " in " + inputFile
                      : "no @forward in " + inputFile +
                            " and more than one function; choose one with "
                            "--func");
    program.functions = {func};
  } else if (StringAttr axis = getStageAxis(program.functions.front())) {
    program.stageAxis = axis.getValue().str();
  }
  func::FuncOp func = program.functions.front();
  if (program.functions.size() > 1 && program.stageAxis.empty())
    return fail("the stage functions of " + inputFile +
                " name no stage axis (dist.pipeline or "
                "dist.parameter_server)");

  // A partitioned function runs on its mesh; its arguments are the global
  // tensors its local ones are parts of.
  std::optional<interp::MeshLayout> mesh;
  if (func->hasAttr("dist.partitioned")) {
    if (!simulateRanks)
      return fail("@" + func.getSymName() +
                  " is partitioned; run it with --simulate-ranks");
    auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
    dist::MeshOp meshOp = meshName ? dist::lookupMesh(func, meshName) : nullptr;
    if (!meshOp)
      return fail("@" + func.getSymName() + " names no mesh it runs on");
    if (program.functions.size() > 1 &&
        (!meshOp.getAxisSize(program.stageAxis) ||
         *meshOp.getAxisSize(program.stageAxis) !=
             int64_t(program.functions.size())))
      return fail("the mesh of " + inputFile + " has no axis '" +
                  program.stageAxis + "' with one coordinate per stage");
    // Stages on meshes of their own follow each other in the ranks.
    FailureOr<::parc::StagedMeshes> staged = getStagedMeshes(
        program.functions.size() > 1 ? ArrayRef<func::FuncOp>(program.functions)
                                     : ArrayRef<func::FuncOp>());
    if (failed(staged))
      return 1;
    SmallVector<dist::MeshOp> stageMeshes;
    for (func::FuncOp stage : program.functions)
      stageMeshes.push_back(dist::lookupMesh(
          stage, stage->getAttrOfType<FlatSymbolRefAttr>("dist.mesh")));
    for (dist::MeshOp stageMesh : stageMeshes)
      program.functionMeshes.emplace_back(stageMesh);
    if (staged->empty()) {
      mesh.emplace(meshOp);
    } else {
      // Stages on meshes of their own meet only point to point.
      for (func::FuncOp stage : program.functions) {
        WalkResult walk = stage.walk([&](dist::CommunicationOpInterface op) {
          if (isa<dist::SendOp, dist::RecvOp>(op) ||
              !llvm::is_contained(
                  op.getGroupAxes().getAsValueRange<StringAttr>(),
                  program.stageAxis))
            return WalkResult::advance();
          op->emitOpError("is a collective over the stage axis '")
              << program.stageAxis
              << "', whose stages run on meshes of their own";
          return WalkResult::interrupt();
        });
        if (walk.wasInterrupted())
          return 1;
      }
      mesh.emplace(ArrayRef<dist::MeshOp>(stageMeshes));
    }
  } else if (simulateRanks) {
    return fail("@" + func.getSymName() +
                " is not partitioned; --simulate-ranks needs the output of "
                "--parc-partition");
  }
  if (failed(describeProgram(program, mesh ? &*mesh : nullptr)))
    return 1;
  SmallVector<ModelArgument> *arguments = &program.arguments;
  if (!replicas && (syncEvery.getNumOccurrences() || averageOptimizerState))
    return fail("--sync-every and --average-optimizer-state are for local "
                "SGD's --replicas");
  if (replicas && (mesh || program.functions.size() > 1))
    return fail("--replicas simulates local SGD with the serial train step, "
                "not a partitioned or pipelined program");
  if (syncEvery < 1)
    return fail("--sync-every must be at least 1");
  // Every replica holds a copy of the model in the evaluator's doubles.
  if (replicas > kMaxReplicas)
    return fail("--replicas must be at most " + llvm::Twine(kMaxReplicas) +
                ", not " + llvm::Twine(replicas));
  // Local SGD's replicas take their shards of one batch `replicas` times
  // larger: it is drawn (or read) at that size.
  SmallVector<ModelArgument> drawnArguments(*arguments);
  for (ModelArgument &argument : drawnArguments) {
    if (replicas < 2 || !isData(argument.role))
      continue;
    if (argument.type.getRank() == 0)
      return fail("--replicas splits inputs and labels along their first "
                  "dimension, but '" +
                  argument.name + "' is a scalar");
    SmallVector<int64_t> shape(argument.type.getShape());
    if (shape[0] > kMaxTensorBytes / replicas)
      return fail("--replicas " + llvm::Twine(replicas) + ": '" +
                  argument.name + "' would be too large");
    shape[0] *= replicas;
    argument.type =
        RankedTensorType::get(shape, argument.type.getElementType());
    if (!getCheckedTensorBytes(argument.type))
      return fail("--replicas " + llvm::Twine(replicas) + ": '" +
                  argument.name + "' would be too large");
  }

  llvm::StringMap<interp::Tensor> given;
  for (const OnnxWeight &weight : onnxWeights)
    given[weight.name] = interp::Tensor(weight.type.getShape(), weight.values);
  if (failed(loadTensors(
          weightsFile, "--weights", *arguments,
          {ArgumentRole::Param, ArgumentRole::OptState, ArgumentRole::Buffer},
          given)) ||
      failed(loadTensors(inputsFile, "--inputs", *arguments,
                         {ArgumentRole::Input, ArgumentRole::Label}, given)))
    return 1;
  llvm::Expected<SmallVector<interp::Tensor>> values =
      interp::prepareArguments(drawnArguments, given, seed);
  if (!values)
    return fail(llvm::toString(values.takeError()));

  if (!weightsOut.empty()) {
    SmallVector<std::string> stateNames;
    SmallVector<interp::Tensor> state;
    SmallVector<Type> stateTypes;
    for (const ModelArgument &argument : *arguments)
      if (argument.role == ArgumentRole::Param ||
          argument.role == ArgumentRole::OptState ||
          argument.role == ArgumentRole::Buffer) {
        stateNames.push_back(argument.name);
        state.push_back((*values)[argument.index]);
        stateTypes.push_back(argument.type.getElementType());
      }
    if (llvm::Error error =
            interp::writeTensorFile(weightsOut, stateNames, state, stateTypes))
      return fail(llvm::toString(std::move(error)));
  }

  interp::Precision mode =
      precision == "f64" ? interp::Precision::F64 : interp::Precision::Stored;
  SmallVector<std::string> &names = program.resultNames;
  // A result named like an argument is that argument in the next step
  // (the parameters and optimizer state of a train step).
  SmallVector<std::optional<unsigned>> feedsBack;
  for (const std::string &name : names) {
    const ModelArgument *argument = llvm::find_if(
        *arguments, [&](const ModelArgument &a) { return a.name == name; });
    feedsBack.push_back(argument != arguments->end()
                            ? std::optional<unsigned>(argument->index)
                            : std::nullopt);
  }
  FailureOr<SmallVector<interp::Tensor>> results;
  CarryState carry(mesh ? mesh->getNumRanks() : 0);
  // An asynchronous pipeline's prologue runs once, setting the carry state.
  if (mesh && !program.prologues.empty()) {
    if (program.prologues.size() != program.functions.size())
      return fail("an asynchronous pipeline needs a prologue for every stage");
    for (func::FuncOp prologue : program.prologues)
      if (failed(checkPrologue(program, prologue)))
        return 1;
    if (failed(
            runOnMesh(program, program.prologues, *mesh, *values, carry, mode)))
      return 1;
  }
  if (replicas && failed(results = runReplicas(func, *arguments, *values,
                                               feedsBack, names, mode)))
    return 1;
  for (unsigned step = 1; step <= steps && !replicas; ++step) {
    results = mesh ? runOnMesh(program, program.functions, *mesh, *values,
                               carry, mode)
                   : interp::evaluateFunction(func, *values, mode);
    if (failed(results))
      return 1;
    for (auto [index, tensor] : llvm::enumerate(*results)) {
      if (feedsBack[index])
        (*values)[*feedsBack[index]] = tensor;
      else if (steps > 1 && tensor.getRank() == 0)
        llvm::outs() << "step " << step << ": " << names[index] << " = "
                     << llvm::format("%.6g", tensor.values[0]) << "\n";
    }
  }

  SmallVector<Type> elementTypes;
  for (auto [name, type, tensor] :
       llvm::zip_equal(names, program.resultTypes, *results)) {
    // A partitioned function's result types are local: print the global.
    Type elementType = getElementTypeOrSelf(type);
    printResult(name, RankedTensorType::get(tensor.shape, elementType), tensor);
    elementTypes.push_back(elementType);
  }
  if (!outFile.empty())
    if (llvm::Error error = interp::writeTensorFile(outFile, names, *results,
                                                     elementTypes))
      return fail(llvm::toString(std::move(error)));
  return 0;
}
