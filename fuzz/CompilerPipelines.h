//===- CompilerPipelines.h - a module through parc's passes -----*- C++ -*-===//
//
// The MLIR and ONNX fuzzers hand what they parsed or imported to the same
// passes and evaluator the tools run, so each input path is fuzzed as far
// as a user's input reaches.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_FUZZ_COMPILERPIPELINES_H
#define PARC_FUZZ_COMPILERPIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <optional>
#include <string>

namespace mlir::parc::fuzz {

/// The dialects and interface models of every tool.
const DialectRegistry &getToolRegistry();

/// Runs clones of `module` through parc-compile's passes (with `planJson`
/// applied when given), through the train step's passes, and the
/// reference evaluator over each function whose tensors are small. Errors
/// are diagnostics, which the caller's handler drops; only a crash, a
/// sanitizer report or a hang is a finding.
void runCompilerPipelines(ModuleOp module,
                          const std::optional<std::string> &planJson);

} // namespace mlir::parc::fuzz

#endif // PARC_FUZZ_COMPILERPIPELINES_H
