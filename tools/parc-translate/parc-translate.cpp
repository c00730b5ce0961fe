//===- parc-translate.cpp - imports models into the parc dialect ----------===//
//
//   parc-translate --import-onnx model.onnx -o model.mlir
//                  [--input-shape name=d0,d1,... ...]
//
// The output file is opened only after the import succeeded: a failed
// import exits 1 and leaves no file behind.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/OnnxImporter.h"
#include "parcrt/Safetensors.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace mlir::parc;
namespace cl = llvm::cl;

static cl::OptionCategory category("parc-translate options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx>"),
                                      cl::cat(category));
static cl::opt<bool> importOnnxFlag(
    "import-onnx", cl::desc("Import an ONNX model (opsets 13 to 17)"),
    cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("filename"),
                                       cl::init("-"), cl::cat(category));
static cl::list<std::string> inputShapeSpecs(
    "input-shape",
    cl::desc("Fix the shape of a graph input with dynamic dimensions: "
             "name=d0,d1,... (repeatable)"),
    cl::value_desc("name=d0,d1,..."), cl::cat(category));

static cl::opt<std::string> weightsOut(
    "weights-out",
    cl::desc("Also write the model's weights (its float initializers) to "
             "this safetensors file, named like the param arguments"),
    cl::value_desc("file"), cl::cat(category));

/// The safetensors dtype of a float element type.
static parcrt::DType fileDType(Type element) {
  if (element.isF16())
    return parcrt::DType::F16;
  if (element.isBF16())
    return parcrt::DType::BF16;
  return parcrt::DType::F32;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "parc model importer\n");
  auto fail = [](const Twine &message) {
    llvm::WithColor::error(llvm::errs(), "parc-translate") << message << "\n";
    return 1;
  };
  if (!importOnnxFlag)
    return fail("choose a translation: --import-onnx");

  SmallVector<OnnxInputShape> shapes;
  for (const std::string &spec : inputShapeSpecs) {
    std::string error;
    FailureOr<OnnxInputShape> shape = parseOnnxInputShape(spec, error);
    if (failed(shape))
      return fail(error);
    shapes.push_back(*shape);
  }

  MLIRContext context;
  // A failing op is named with its location; printing it too would bury
  // the message under the whole function.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  SmallVector<OnnxWeight> weights;
  FailureOr<OwningOpRef<ModuleOp>> module =
      importOnnx(inputFile, &context, shapes, &weights);
  if (failed(module))
    return 1;
  if (!weightsOut.empty()) {
    parcrt::SafetensorsWriter writer;
    for (const OnnxWeight &weight : weights)
      writer.add(weight.name, fileDType(weight.type.getElementType()),
                 std::vector<int64_t>(weight.type.getShape().begin(),
                                      weight.type.getShape().end()),
                 weight.values.data());
    std::string error;
    if (!writer.write(weightsOut, &error))
      return fail(error);
  }

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output)
    return fail(error);
  (*module)->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
