//===- ModelFile.cpp - a model from an MLIR or ONNX file ------------------===//

#include "parc/Import/ModelFile.h"

#include "parc/Support/InputFile.h"
#include "parc/Support/NestingDepth.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

bool mlir::parc::isOnnxModelPath(StringRef path) { return path.ends_with(".onnx"); }

OwningOpRef<ModuleOp> mlir::parc::loadModel(StringRef path,
                                      llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context,
                                      SmallVectorImpl<OnnxWeight> *weights) {
  if (!isOnnxModelPath(path)) {
    auto buffer = readInputFile(path, "the model",
                                        kMaxModelFileBytes);
    if (!buffer) {
      emitError(UnknownLoc::get(context), llvm::toString(buffer.takeError()));
      return nullptr;
    }
    if (llvm::Error deep =
            checkMlirNestingDepth((*buffer)->getMemBufferRef())) {
      emitError(UnknownLoc::get(context), llvm::toString(std::move(deep)));
      return nullptr;
    }
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, context);
  }
  FailureOr<OwningOpRef<ModuleOp>> imported =
      importOnnx(path, context, {}, weights);
  if (failed(imported))
    return nullptr;
  return std::move(*imported);
}
