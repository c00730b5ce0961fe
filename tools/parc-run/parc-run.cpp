//===- parc-run.cpp - runs a model with the reference evaluator -----------===//
//
//   parc-run --reference model.mlir [--weights w.safetensors]
//            [--inputs batch.safetensors] [--seed N] [--out results.safetensors]
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/Import/ModelFile.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Interp/EvaluableOpInterface.h"
#include "parc/Interp/Evaluator.h"
#include "parc/Interp/ModelData.h"
#include "parc/Interp/ShardedTensors.h"

#include "dist/IR/DistDialect.h"
#include "parc/Interp/CollectiveEvaluableOpInterface.h"

#include "mlir/IR/MLIRContext.h"
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
static cl::opt<std::string> precision("precision",
                                      cl::desc("f32 (default) or f64"),
                                      cl::init("f32"),
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
    low = std::min(low, value);
    high = std::max(high, value);
  }
  double count = std::max<int64_t>(tensor.getNumElements(), 1);
  double mean = sum / count;
  double std = std::sqrt(std::max(0.0, squares / count - mean * mean));
  llvm::outs() << ": " << type << " mean " << llvm::format("%.6g", mean)
               << " std " << llvm::format("%.6g", std) << " min "
               << llvm::format("%.6g", low) << " max "
               << llvm::format("%.6g", high) << "\n";
}

/// Slices the global arguments for every rank, runs all ranks and
/// assembles each global result from the ranks' parts.
static FailureOr<SmallVector<interp::Tensor>>
runOnMesh(func::FuncOp func, const interp::MeshLayout &mesh,
          ArrayRef<interp::Tensor> globals, interp::Precision mode) {
  auto shardingOf = [&](DictionaryAttr attrs) {
    return attrs ? attrs.getAs<dist::ShardingAttr>(
                       dist::DistDialect::kShardingAttrName)
                 : dist::ShardingAttr();
  };
  SmallVector<SmallVector<interp::Tensor>> rankArguments(mesh.getNumRanks());
  for (auto [index, global] : llvm::enumerate(globals)) {
    dist::ShardingAttr sharding = shardingOf(func.getArgAttrDict(index));
    for (int64_t rank = 0; rank < mesh.getNumRanks(); ++rank)
      rankArguments[rank].push_back(
          interp::sliceForRank(global, sharding, mesh, rank));
  }
  FailureOr<SmallVector<SmallVector<interp::Tensor>>> rankResults =
      interp::evaluateOnMesh(func, mesh, rankArguments, mode);
  if (failed(rankResults))
    return failure();
  SmallVector<interp::Tensor> results;
  for (unsigned index = 0; index < func.getNumResults(); ++index) {
    dist::ShardingAttr sharding = shardingOf(func.getResultAttrDict(index));
    if (!sharding)
      return func.emitError() << "result #" << index
                              << " has no dist.sharding";
    SmallVector<interp::Tensor> parts;
    for (const SmallVector<interp::Tensor> &rank : *rankResults)
      parts.push_back(rank[index]);
    results.push_back(interp::assembleFromRanks(parts, sharding, mesh));
  }
  return results;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "parc reference runner\n");
  if (precision != "f32" && precision != "f64")
    return fail("--precision must be f32 or f64, got '" + precision + "'");

  DialectRegistry registry;
  registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect>();
  interp::registerEvaluableOpInterfaceModels(registry);
  interp::registerCollectiveEvaluableOpInterfaceModels(registry);
  MLIRContext context(registry);
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
  func::FuncOp func = findModelFunction(*module, funcName);
  if (!func)
    return fail(funcName.getNumOccurrences()
                    ? "no function @" + funcName + " in " + inputFile
                    : "no @forward in " + inputFile +
                          " and more than one function; choose one with "
                          "--func");
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return 1;

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
    mesh.emplace(meshOp);
    for (ModelArgument &argument : *arguments) {
      auto sharding = func.getArgAttrOfType<dist::ShardingAttr>(
          argument.index, dist::DistDialect::kShardingAttrName);
      if (!sharding)
        return fail("argument '" + argument.name + "' has no dist.sharding");
      argument.type = RankedTensorType::get(
          interp::getGlobalShape(argument.type.getShape(), sharding, *mesh),
          argument.type.getElementType());
    }
  } else if (simulateRanks) {
    return fail("@" + func.getSymName() +
                " is not partitioned; --simulate-ranks needs the output of "
                "--parc-partition");
  }

  llvm::StringMap<interp::Tensor> given;
  for (const OnnxWeight &weight : onnxWeights)
    given[weight.name] = interp::Tensor(weight.type.getShape(), weight.values);
  if (failed(loadTensors(weightsFile, "--weights", *arguments,
                         {ArgumentRole::Param, ArgumentRole::OptState},
                         given)) ||
      failed(loadTensors(inputsFile, "--inputs", *arguments,
                         {ArgumentRole::Input, ArgumentRole::Label}, given)))
    return 1;
  llvm::Expected<SmallVector<interp::Tensor>> values =
      interp::prepareArguments(*arguments, given, seed);
  if (!values)
    return fail(llvm::toString(values.takeError()));

  interp::Precision mode =
      precision == "f64" ? interp::Precision::F64 : interp::Precision::F32;
  SmallVector<std::string> names = getResultNames(func);
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
  for (unsigned step = 1; step <= steps; ++step) {
    results = mesh ? runOnMesh(func, *mesh, *values, mode)
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
       llvm::zip_equal(names, func.getResultTypes(), *results)) {
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
