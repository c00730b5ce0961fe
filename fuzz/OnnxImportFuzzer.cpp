//===- OnnxImportFuzzer.cpp - ONNX files through the importer and passes --===//
//
// Any bytes give an import error or a module, which then goes through the
// same passes and evaluator as MLIR text (CompilerPipelines.h); never a
// crash, a sanitizer report or a hang.
//
//===----------------------------------------------------------------------===//

#include "CompilerPipelines.h"

#include "parc/Import/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The importer reads files (external data lies next to them); one per
  // process, rewritten for each input.
  static const std::string path =
      "/tmp/parc-onnx-fuzz." + std::to_string(getpid()) + ".onnx";
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char *>(data),
               static_cast<std::streamsize>(size));
  }
  MLIRContext context(parc::fuzz::getToolRegistry());
  context.printOpOnDiagnostic(false);
  // Diagnostics are the expected outcome and are dropped, unless
  // PARC_FUZZ_DIAGNOSTICS is set to read what a reproducer does.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
    return success(std::getenv("PARC_FUZZ_DIAGNOSTICS") == nullptr);
  });
  SmallVector<parc::OnnxWeight> weights;
  FailureOr<OwningOpRef<ModuleOp>> module =
      parc::importOnnx(path, &context, /*inputShapes=*/{}, &weights);
  if (failed(module))
    return 0;
  parc::fuzz::runCompilerPipelines(**module, std::nullopt);
  return 0;
}
