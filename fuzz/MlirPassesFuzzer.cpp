//===- MlirPassesFuzzer.cpp - MLIR text through parc's passes -------------===//
//
// Any text gives a parse error, a diagnostic from a pass or the
// evaluator, or a result; never a crash, a sanitizer report or a hang. An
// input may carry a plan after a line "//--plan": the passes then apply it
// as parc-compile --plan does.
//
//===----------------------------------------------------------------------===//

#include "CompilerPipelines.h"

#include "parc/Support/NestingDepth.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StringRef input(reinterpret_cast<const char *>(data), size);
  auto [text, plan] = input.split("\n//--plan\n");
  std::optional<std::string> planJson;
  if (text.size() != input.size())
    planJson = plan.str();
  // As every tool does before MLIR's recursive parser runs.
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir");
  if (llvm::Error error = parc::checkMlirNestingDepth(*buffer)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  // A context per input: nothing one input interns reaches the next.
  MLIRContext context(parc::fuzz::getToolRegistry());
  context.printOpOnDiagnostic(false);
  // Diagnostics are the expected outcome and are dropped, unless
  // PARC_FUZZ_DIAGNOSTICS is set to read what a reproducer does.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
    return success(std::getenv("PARC_FUZZ_DIAGNOSTICS") == nullptr);
  });
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(buffer->getBuffer(), &context);
  if (!module || failed(verify(*module)))
    return 0;
  parc::fuzz::runCompilerPipelines(*module, planJson);
  return 0;
}
