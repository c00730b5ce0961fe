//===- parc-opt.cpp - runs parc passes, as mlir-opt does ------------------===//
//
// An .onnx input is imported first, then goes through the same pipeline as
// MLIR text; its ops keep the ONNX node locations for diagnostics.
//
//===----------------------------------------------------------------------===//

#include "dist/IR/DistDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "parc/Conversion/Passes.h"
#include "parc/Conversion/RuntimeCallOpInterface.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Import/ModelFile.h"
#include "parc/Support/InputFile.h"
#include "parc/Support/NestingDepth.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"
#include "parc/Transforms/Passes.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// Imports `path` and prints it, with locations, as the buffer MlirOptMain
/// parses; null after the importer has reported why.
static std::unique_ptr<llvm::MemoryBuffer>
importToBuffer(StringRef path, DialectRegistry &registry) {
  MLIRContext context(registry);
  FailureOr<OwningOpRef<ModuleOp>> module = parc::importOnnx(path, &context);
  if (failed(module))
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os, OpPrintingFlags().enableDebugInfo());
  return llvm::MemoryBuffer::getMemBufferCopy(text, path);
}

int main(int argc, char **argv) {
  registerTransformsPasses();
  parc::registerParcPasses();
  parc::registerParcConversionPasses();
  DialectRegistry registry;
  registry.insert<parc::ParcDialect, dist::DistDialect, func::FuncDialect>();
  parc::registerLocalPartitionModels(registry);
  parc::registerRuntimeCallModels(registry);

  // A failing op is named with its location; printing it too would bury the
  // message under the whole function (--mlir-print-op-on-diagnostic shows
  // it).
  std::vector<char *> arguments(argv, argv + argc);
  static char quietDiagnostics[] = "--mlir-print-op-on-diagnostic=false";
  if (llvm::none_of(arguments, [](StringRef argument) {
        return argument.starts_with("--mlir-print-op-on-diagnostic") ||
               argument.starts_with("-mlir-print-op-on-diagnostic");
      }))
    arguments.insert(arguments.begin() + 1, quietDiagnostics);
  argc = static_cast<int>(arguments.size());
  argv = arguments.data();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "parc optimizer driver\n", registry);
  // A named file is bounded (a device or FIFO would be read forever); MLIR
  // text, from a file or stdin ("-"), is bounded in its nesting.
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (parc::isOnnxModelPath(inputFilename)) {
    buffer = importToBuffer(inputFilename, registry);
  } else if (inputFilename == "-") {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> read =
        llvm::MemoryBuffer::getSTDIN();
    if (!read)
      llvm::errs() << "parc-opt: cannot read stdin: "
                   << read.getError().message() << "\n";
    else
      buffer = std::move(*read);
  } else {
    auto read = parc::readInputFile(inputFilename, "the input",
                                    parc::kMaxModelFileBytes);
    if (!read)
      llvm::errs() << "parc-opt: " << llvm::toString(read.takeError()) << "\n";
    else
      buffer = std::move(*read);
  }
  if (!buffer)
    return 1;
  if (llvm::Error deep =
          parc::checkMlirNestingDepth(buffer->getMemBufferRef())) {
    llvm::errs() << "parc-opt: " << llvm::toString(std::move(deep)) << "\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (failed(MlirOptMain(output->os(), std::move(buffer), registry,
                         MlirOptMainConfig::createFromCLOptions())))
    return 1;
  output->keep();
  return 0;
}
