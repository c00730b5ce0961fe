//===- OnnxImporter.h - ONNX models to parc functions -----------*- C++ -*-===//
//
// Reads an ONNX model (opsets 13 to 17 of the default domain) and builds a
// module with one `func.func @forward` that follows the model convention:
// float initializers become `param` arguments, graph inputs become `input`
// arguments, results are named after the graph outputs. Errors (an
// unreadable file, a model the ONNX checker rejects, an unsupported op or
// type, a dynamic dimension left open) are emitted as diagnostics on the
// context and the import fails; it never throws or aborts.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IMPORT_ONNXIMPORTER_H
#define PARC_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace mlir::parc {

/// Fixes the shape of one graph input (`--input-shape name=d0,d1,...`).
struct OnnxInputShape {
  std::string name;
  SmallVector<int64_t> shape;
};

/// Parses `name=d0,d1,...`; on failure returns a message saying why.
FailureOr<OnnxInputShape> parseOnnxInputShape(StringRef spec,
                                              std::string &error);

/// The value of a float initializer: the weights the model was exported with.
struct OnnxWeight {
  std::string name;
  RankedTensorType type;
  std::vector<double> values;
};

/// Imports the ONNX model at `path`. With `weights`, also returns the
/// values of the initializers that became `param` arguments.
FailureOr<OwningOpRef<ModuleOp>>
importOnnx(StringRef path, MLIRContext *context,
           ArrayRef<OnnxInputShape> inputShapes = {},
           SmallVectorImpl<OnnxWeight> *weights = nullptr);

/// The ONNX op types the importer converts, sorted.
ArrayRef<StringRef> getSupportedOnnxOps();

/// Rewrites the unfused forms PyTorch exports into single parc ops in
/// `module` (GELU's erf form into parc.gelu, layer normalization into
/// parc.layer_norm, attention into parc.attention) and erases what they
/// leave dead. See
/// docs/tools/parc-translate.md for the exact patterns.
void fuseExportedPatterns(ModuleOp module);

/// Rewrites scaled dot-product attention spelled out by an exporter (the
/// score product, scale, additive mask, softmax and value product, with
/// grouped-query key/value heads repeated) into parc.attention; the
/// unused ops are left for the caller to erase. See AttentionPatterns.cpp.
void fuseExportedAttention(ModuleOp module);

/// Rewrites reshape -> transpose -> reshape chains whose transposed tensor
/// merges dimensions (the exporters' head splits) over the factors of their
/// shapes, so that a sharding of any factor can propagate through them;
/// the replaced ops are left for the caller to erase. See LayoutChains.cpp.
void refactorLayoutChains(ModuleOp module);

} // namespace mlir::parc

#endif // PARC_IMPORT_ONNXIMPORTER_H
