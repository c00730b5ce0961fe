//===- ModelFile.h - a model from an MLIR or ONNX file ----------*- C++ -*-===//
//
// The tools take a model as MLIR text or as an ONNX file, told apart by the
// `.onnx` extension.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IMPORT_MODELFILE_H
#define PARC_IMPORT_MODELFILE_H

#include "parc/Import/OnnxImporter.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::parc {

/// True when `path` names an ONNX model.
bool isOnnxModelPath(StringRef path);

/// Reads the model at `path`: an ONNX model is imported (with `weights`, its
/// initializers' values are returned there), anything else is parsed as MLIR
/// through `sourceMgr`. Null once the reason has been reported.
OwningOpRef<ModuleOp> loadModel(StringRef path, llvm::SourceMgr &sourceMgr,
                                MLIRContext *context,
                                SmallVectorImpl<OnnxWeight> *weights = nullptr);

} // namespace mlir::parc

#endif // PARC_IMPORT_MODELFILE_H
