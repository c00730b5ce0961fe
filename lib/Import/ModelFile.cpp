//===- ModelFile.cpp - a model from an MLIR or ONNX file ------------------===//

#include "parc/Import/ModelFile.h"

#include "mlir/Parser/Parser.h"

using namespace mlir;

bool parc::isOnnxModelPath(StringRef path) { return path.ends_with(".onnx"); }

OwningOpRef<ModuleOp> parc::loadModel(StringRef path,
                                      llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context,
                                      SmallVectorImpl<OnnxWeight> *weights) {
  if (!isOnnxModelPath(path))
    return parseSourceFile<ModuleOp>(path, sourceMgr, context);
  FailureOr<OwningOpRef<ModuleOp>> imported =
      importOnnx(path, context, {}, weights);
  if (failed(imported))
    return nullptr;
  return std::move(*imported);
}
