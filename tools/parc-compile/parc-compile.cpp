//===- parc-compile.cpp - model to per-rank executables -------------------===//
//
//   parc-compile model.mlir --plan plan.json -o out/
//   out/launch.sh --steps 3
//
// Runs the whole pipeline (plan, propagation, partitioning, memory plan,
// lowering to libparcrt calls, LLVM IR, object file), links the program
// with libparcrt, and writes the manifest, the launch line and a summary.
//
//===----------------------------------------------------------------------===//

#include "OutputDirectory.h"
#include "parc/Conversion/ObjectEmission.h"
#include "parc/Conversion/Passes.h"
#include "parc/Conversion/RuntimeCallOpInterface.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Import/ModelFile.h"
#include "parc/Plan/CompileReport.h"
#include "parc/RuntimeLinkConfig.h"
#include "parc/Support/MeshArithmetic.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/ParameterServer.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/PerRankPipeline.h"
#include "parc/Transforms/Pipeline.h"
#include "parc/Transforms/StageMeshes.h"
#include "parcrt/Safetensors.h"

#include "dist/IR/DistOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::parc;
namespace cl = llvm::cl;

static cl::OptionCategory category("parc-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"),
                                      cl::value_desc("dir"), cl::Required,
                                      cl::cat(category));
static cl::opt<std::string> planFile(
    "plan", cl::desc("Plan file with the mesh and shardings"),
    cl::cat(category));
static cl::opt<std::string> meshSpec(
    "mesh",
    cl::desc("Mesh for shardings written in the IR, e.g. dp=2,tp=2 (creates "
             "dist.mesh @mesh unless the module has it)"),
    cl::cat(category));
static cl::opt<std::string> funcName(
    "func", cl::desc("Model function (default: @forward, or the only one)"),
    cl::cat(category));
static cl::opt<std::string> emit(
    "emit",
    cl::desc("Stop after writing program.mlir (mlir), program.ll (llvm) or "
             "program.o (obj); default: the linked executable (exe)"),
    cl::init("exe"), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "parc-compile: " << message << "\n";
  return 1;
}

/// Adds `dist.mesh @mesh` from "dp=2,tp=2" unless the module has a @mesh.
static LogicalResult addMesh(ModuleOp module, StringRef spec) {
  if (module.lookupSymbol<dist::MeshOp>("mesh"))
    return success();
  OpBuilder builder(module.getContext());
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  SmallVector<StringRef> axes;
  spec.split(axes, ',');
  for (StringRef axis : axes) {
    auto [name, size] = axis.split('=');
    int64_t value;
    if (name.trim().empty() || size.trim().getAsInteger(10, value) ||
        value < 1) {
      fail("--mesh expects name=size pairs such as dp=2,tp=2, got '" + spec +
           "'");
      return failure();
    }
    names.push_back(builder.getStringAttr(name.trim()));
    sizes.push_back(value);
  }
  builder.setInsertionPointToStart(module.getBody());
  dist::MeshOp::create(builder, module.getLoc(), "mesh",
                       builder.getArrayAttr(names),
                       builder.getDenseI64ArrayAttr(sizes));
  return success();
}

static LogicalResult writeFile(StringRef path, StringRef content) {
  std::error_code code;
  llvm::raw_fd_ostream out(path, code);
  if (code) {
    fail("cannot write " + path + ": " + code.message());
    return failure();
  }
  out << content;
  return success();
}

/// Links the program object with libparcrt through the MPI compiler wrapper.
static LogicalResult link(StringRef object, StringRef executable) {
  llvm::ErrorOr<std::string> driver =
      llvm::sys::findProgramByName(PARC_LINK_DRIVER);
  if (!driver) {
    fail("cannot find the linker driver '" + llvm::Twine(PARC_LINK_DRIVER) +
         "'");
    return failure();
  }
  SmallVector<StringRef> args = {*driver, object, "-o", executable};
  for (StringRef piece : llvm::split(PARC_RUNTIME_LINK_ARGS, ';'))
    if (!piece.empty())
      args.push_back(piece);
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0,
                                         &error);
  if (status != 0) {
    fail("linking " + executable + " failed" +
         (error.empty() ? "" : ": " + error));
    return failure();
  }
  return success();
}

/// How the summary and the executable's name call stage function `stage`:
/// "stage0", "stage1", ... of a pipeline; "workers" and "servers" of
/// dedicated parameter servers.
static std::string getStageName(func::FuncOp func, size_t stage) {
  if (func->hasAttr(kParameterServerAttrName))
    return stage == 0 ? "workers" : "servers";
  return "stage" + std::to_string(stage);
}

/// A stage's schedule and the micro-batches it holds activations of.
static void printStageSchedule(llvm::raw_ostream &os, func::FuncOp stageFunc) {
  auto pipeline = stageFunc->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  auto schedule = pipeline ? pipeline.getAs<StringAttr>("schedule") : nullptr;
  auto microbatches =
      pipeline ? pipeline.getAs<IntegerAttr>("microbatches") : nullptr;
  if (!schedule || !microbatches)
    return; // a hand-written stage without a schedule to report
  os << "schedule: " << schedule.getValue() << ", " << microbatches.getInt()
     << " micro-batches, activations of at most "
     << getMaxInFlight(getStageSchedule(stageFunc))
     << " micro-batches alive\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "parc compiler: model to rank executables\n");
  if (emit != "mlir" && emit != "llvm" && emit != "obj" && emit != "exe")
    return fail("--emit must be mlir, llvm, obj or exe, got '" + emit + "'");

  DialectRegistry registry;
  registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect,
                  LLVM::LLVMDialect>();
  registerLocalPartitionModels(registry);
  registerRuntimeCallModels(registry);
  registerLLVMTranslations(registry);
  MLIRContext context(registry);
  // A failing op is named with its location; printing it too would bury
  // the message under the whole function.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  // An ONNX model is imported first; its weights are written next to the
  // program for --weights.
  SmallVector<OnnxWeight> onnxWeights;
  bool fromOnnx = isOnnxModelPath(inputFile);
  OwningOpRef<ModuleOp> module =
      loadModel(inputFile, sourceMgr, &context, &onnxWeights);
  if (!module)
    return 1;
  if (!meshSpec.empty() && failed(addMesh(*module, meshSpec)))
    return 1;

  // Sharding, partitioning and the memory plan.
  PassManager pm(&context);
  addLayoutPasses(pm, planFile);
  addPerRankPasses(pm);
  if (failed(pm.run(*module)))
    return 1;

  // One executable, or one per pipeline stage (MPMD: a stage's ranks run
  // only its program, so each holds only its stage's code and memory plan).
  FailureOr<SmallVector<func::FuncOp>> stages = getStageFunctions(*module);
  if (failed(stages))
    return 1;
  SmallVector<func::FuncOp> functions = std::move(*stages);
  bool staged = !functions.empty();
  if (!staged) {
    func::FuncOp func = findModelFunction(*module, funcName);
    if (!func)
      return fail("no model function " +
                  (funcName.empty() ? "(@forward, or a single function)"
                                    : "@" + funcName) +
                  " in " + inputFile);
    functions.push_back(func);
  }
  OutputDirectory outputs;
  if (std::error_code code = OutputDirectory::create(outputDir, outputs))
    return fail("cannot create " + outputDir + ": " + code.message());
  auto outPath = [&](StringRef name) { return outputs.stagingPath(name); };
  auto publish = [&]() {
    if (std::error_code code = outputs.publish()) {
      fail("cannot move the outputs into " + outputDir + ": " +
           code.message());
      return false;
    }
    return true;
  };

  func::FuncOp first = functions.front();
  std::vector<std::string> axisNames;
  std::vector<int64_t> axisSizes;
  if (auto meshName = first->getAttrOfType<FlatSymbolRefAttr>("dist.mesh"))
    if (dist::MeshOp mesh = dist::lookupMesh(first, meshName))
      for (auto [name, size] :
           llvm::zip_equal(mesh.getAxisNames().getAsValueRange<StringAttr>(),
                           mesh.getAxisSizes())) {
        axisNames.push_back(name.str());
        axisSizes.push_back(size);
      }
  std::string stageAxis;
  if (StringAttr axis = getStageAxis(first))
    stageAxis = axis.getValue().str();
  // Each rank's coordinate on the stage axis picks its executable.
  auto stageAxisIt = llvm::find(axisNames, stageAxis);
  if (staged &&
      (stageAxisIt == axisNames.end() ||
       axisSizes[stageAxisIt - axisNames.begin()] != int64_t(functions.size())))
    return fail("the stage functions of " + inputFile +
                " name no stage axis of their mesh with one coordinate per "
                "stage (dist.pipeline or dist.parameter_server)");

  size_t stageAxisPosition =
      llvm::find(axisNames, stageAxis) - axisNames.begin();
  // Stages on meshes of their own (fewer dedicated parameter servers than
  // workers) follow each other in the world's ranks.
  FailureOr<::parc::StagedMeshes> stageMeshes = getStagedMeshes(
      staged ? ArrayRef<func::FuncOp>(functions) : ArrayRef<func::FuncOp>());
  if (failed(stageMeshes))
    return 1;

  // A plan written by parc-plan carries its predictions; the summary prints
  // them beside the compiled figures (ApplyPlan has read the file already).
  std::optional<Plan> plan;
  if (!planFile.empty())
    if (auto buffer = llvm::MemoryBuffer::getFile(planFile)) {
      llvm::Expected<Plan> read = readPlan((*buffer)->getBuffer(), planFile);
      if (read)
        plan = std::move(*read);
      else
        llvm::consumeError(read.takeError());
    }

  // What the summary reports is read before lowering replaces the
  // functions.
  std::string summary;
  llvm::raw_string_ostream os(summary);
  SmallVector<std::string> executables;
  SmallVector<OwningOpRef<ModuleOp>> programs;
  int64_t ranks = 1;
  std::vector<CompiledFigures> figures;
  for (func::FuncOp func : functions) {
    FailureOr<CompiledFigures> measured = measureCompiledProgram(func);
    if (failed(measured))
      return 1;
    if (!stageMeshes->empty())
      measured->ranks = stageMeshes->getNumRanks();
    figures.push_back(std::move(*measured));
  }
  PredictedStages described = findPredictedStages(functions, figures);
  const Plan *predicted = plan ? &*plan : nullptr;
  for (auto [stage, func] : llvm::enumerate(functions)) {
    ranks = figures[stage].ranks;
    std::string stageName = getStageName(func, stage);
    if (staged) {
      os << (func->hasAttr(kParameterServerAttrName)
                 ? stageName
                 : "stage " + std::to_string(stage))
         << " (" << func.getSymName() << "):\n";
      printStageSchedule(os, func);
    }
    printCompileSummary(os, figures[stage],
                        stage == described.heaviest ? predicted : nullptr,
                        stage == described.busiest ? predicted : nullptr);
    executables.push_back(staged ? "program." + stageName : "program");
    // Each executable lowers its own copy of the module.
    OwningOpRef<ModuleOp> program =
        staged ? OwningOpRef<ModuleOp>(module->clone()) : std::move(module);
    PassManager lowering(&context);
    lowering.addPass(createLowerToRuntimePass(
        LowerToRuntimePassOptions{func.getSymName().str()}));
    if (failed(lowering.run(*program)))
      return 1;
    programs.push_back(std::move(program));
  }

  if (fromOnnx) {
    parcrt::SafetensorsWriter writer;
    for (const OnnxWeight &weight : onnxWeights) {
      Type element = weight.type.getElementType();
      writer.add(weight.name,
                 element.isF16()    ? parcrt::DType::F16
                 : element.isBF16() ? parcrt::DType::BF16
                                    : parcrt::DType::F32,
                 std::vector<int64_t>(weight.type.getShape().begin(),
                                      weight.type.getShape().end()),
                 weight.values.data());
    }
    std::string error;
    if (!writer.write(outPath("weights.safetensors"), &error))
      return fail(error);
  }
  llvm::outs() << summary;
  if (failed(writeFile(outPath("summary.txt"), summary)))
    return 1;

  for (auto [executable, program] : llvm::zip_equal(executables, programs)) {
    if (emit == "mlir") {
      std::string text;
      llvm::raw_string_ostream os(text);
      program->print(os);
      if (failed(writeFile(outPath(executable + ".mlir"), text)))
        return 1;
      continue;
    }
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateToLLVMIR(*program, llvmContext);
    if (!llvmModule)
      return 1;
    if (emit == "llvm") {
      std::string text;
      llvm::raw_string_ostream os(text);
      llvmModule->print(os, nullptr);
      if (failed(writeFile(outPath(executable + ".ll"), text)))
        return 1;
      continue;
    }
    std::string error;
    if (failed(emitObjectFile(*llvmModule, outPath(executable + ".o"), error)))
      return fail(error);
    if (emit != "obj" &&
        failed(link(outPath(executable + ".o"), outPath(executable))))
      return 1;
  }
  if (emit != "exe")
    return publish() ? 0 : 1;

  // manifest.json: every rank's executable, stage and coordinates.
  ::parc::MeshShape meshShape(axisSizes);
  auto stageOf = [&](int64_t rank) -> int64_t {
    if (!stageMeshes->empty())
      return stageMeshes->getStage(rank);
    return staged ? meshShape.getCoordinate(rank, stageAxisPosition) : 0;
  };
  auto coordinatesOf = [&](int64_t rank) {
    if (stageMeshes->empty())
      return meshShape.getCoordinates(rank);
    return stageMeshes->getMesh(stageOf(rank))
        .getCoordinates(stageMeshes->getMeshRank(rank));
  };
  nlohmann::ordered_json manifest;
  manifest["ranks"] = ranks;
  manifest["mesh"] = {{"axes", axisNames}, {"sizes", axisSizes}};
  for (size_t stage = 0; stage < stageMeshes->getNumStages(); ++stage)
    manifest["stage_meshes"].push_back(stageMeshes->getMesh(stage).getSizes());
  if (staged)
    manifest[first->hasAttr(kParameterServerAttrName) ? "server_axis"
                                                      : "pipeline_axis"] =
        stageAxis;
  nlohmann::ordered_json rankList = nlohmann::ordered_json::array();
  for (int64_t rank = 0; rank < ranks; ++rank) {
    nlohmann::ordered_json entry = {{"rank", rank},
                                    {"executable", executables[stageOf(rank)]}};
    if (staged)
      entry["stage"] = stageOf(rank);
    entry["coordinates"] = coordinatesOf(rank);
    rankList.push_back(entry);
  }
  manifest["rank_programs"] = rankList;
  if (failed(writeFile(outPath("manifest.json"), manifest.dump(2) + "\n")))
    return 1;

  // launch.sh: mpirun's MPMD form, one `-np N exe` per run of consecutive
  // ranks with the same executable (all ranks of a stage when the stage
  // axis is the first).
  std::string command = "exec mpirun ${PARC_MPIRUN_FLAGS:---bind-to none}";
  for (int64_t rank = 0; rank < ranks;) {
    int64_t end = rank;
    while (end < ranks && stageOf(end) == stageOf(rank))
      ++end;
    if (rank > 0)
      command += " :";
    command += " -np " + std::to_string(end - rank) + " \"$here/" +
               executables[stageOf(rank)] + "\" \"$@\"";
    rank = end;
  }
  std::string launch =
      "#!/bin/sh\n"
      "# Runs the compiled program on its " +
      std::to_string(ranks) +
      " ranks. mpirun flags go in PARC_MPIRUN_FLAGS\n"
      "# (default --bind-to none: Open MPI would pin each rank to one core and\n"
      "# starve a multi-threaded BLAS); program flags follow. The programs are\n"
      "# found next to this script, also when it is run through a symlink.\n"
      "here=$(dirname \"$(readlink -f \"$0\")\")\n" +
      command + "\n";
  if (failed(writeFile(outPath("launch.sh"), launch)))
    return 1;
  llvm::sys::fs::setPermissions(outPath("launch.sh"),
                                llvm::sys::fs::all_read |
                                    llvm::sys::fs::all_exe |
                                    llvm::sys::fs::owner_write);

  if (!publish())
    return 1;
  if (fromOnnx)
    llvm::outs() << "the model's weights: launch.sh --weights "
                 << outputs.finalPath("weights.safetensors") << "\n";
  llvm::outs() << "wrote";
  for (const std::string &executable : executables)
    llvm::outs() << " " << outputs.finalPath(executable) << ",";
  llvm::outs() << " " << outputs.finalPath("manifest.json") << ", "
               << outputs.finalPath("launch.sh") << "\n";
  return 0;
}
