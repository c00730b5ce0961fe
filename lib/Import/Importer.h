//===- Importer.h - the ONNX importer's state and helpers -------*- C++ -*-===//
//
// One Importer per model: lib/Import/OnnxImporter.cpp converts the nodes to
// parc ops, lib/Import/OnnxFolding.cpp evaluates the nodes whose results
// are known at import time (shape arithmetic) instead.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_IMPORT_IMPORTER_H
#define PARC_LIB_IMPORT_IMPORTER_H

#include "KnownTensor.h"

#include "parc/Import/OnnxImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

namespace mlir::parc::onnx_import {

/// Module-path names (model.layers.0.self_attn.q_proj.weight) for the
/// initializers that torch.onnx renamed (onnx::MatMul_N, val_N), keyed by
/// their ONNX names; lib/Import/ModulePaths.cpp.
llvm::StringMap<std::string> getModulePathNames(const onnx::GraphProto &graph);

/// Signals a reported error; the diagnostic has been emitted.
struct Reported {};

class Importer {
public:
  Importer(StringRef path, MLIRContext *context,
           ArrayRef<OnnxInputShape> inputShapes,
           SmallVectorImpl<OnnxWeight> *weights)
      : path(path), context(context), builder(context),
        inputShapes(inputShapes), weights(weights),
        fileLoc(FileLineColLoc::get(context, path, 0, 0)) {}

  FailureOr<OwningOpRef<ModuleOp>> run();

private:
  // Model loading.
  LogicalResult load();
  /// parc's own checks of a model newer than libonnx's checker knows.
  LogicalResult checkGraph();
  // Types and constants.
  FailureOr<Type> elementType(int32_t onnxType, const Twine &what);
  FailureOr<KnownTensor> readTensor(const onnx::TensorProto &tensor,
                                    const Twine &what);
  /// The bytes of a tensor stored as external data, as raw_data holds them.
  FailureOr<std::string> readExternalData(const onnx::TensorProto &tensor,
                                          const Twine &what);
  DenseElementsAttr denseAttr(const KnownTensor &known);
  Value constant(const KnownTensor &known);
  Value scalarConstant(Type element, double value);

  // The graph.
  LogicalResult buildFunction();
  LogicalResult importNode(const onnx::NodeProto &node);
  /// Evaluates `node` into known tensors when its outputs follow from known
  /// inputs (OnnxFolding.cpp): true when it did, false when the node is to
  /// be converted, a failure with a diagnostic when the node is invalid.
  FailureOr<bool> foldNode(const onnx::NodeProto &node);
  /// The ops foldNode evaluates.
  static ArrayRef<StringRef> getFoldedOps();

  // Node helpers.
  InFlightDiagnostic nodeError(const onnx::NodeProto &node);
  LogicalResult unsupported(const onnx::NodeProto &node, const Twine &why);
  /// Fails, naming the node, when its op is not one parc converts or folds.
  LogicalResult checkOpSupported(const onnx::NodeProto &node);
  /// Fails, naming the node, when its op is one parc only folds (and
  /// foldNode did not).
  LogicalResult checkConverted(const onnx::NodeProto &node);
  FailureOr<Value> operand(const onnx::NodeProto &node, int index);
  bool hasOperand(const onnx::NodeProto &node, int index) {
    return index < node.input_size() && !node.input(index).empty();
  }
  FailureOr<KnownTensor> knownOperand(const onnx::NodeProto &node, int index,
                                      StringRef role);
  FailureOr<SmallVector<int64_t>> knownInts(const onnx::NodeProto &node,
                                            int index, StringRef role);
  const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                        StringRef name);
  int64_t intAttr(const onnx::NodeProto &node, StringRef name,
                  int64_t fallback);
  float floatAttr(const onnx::NodeProto &node, StringRef name, float fallback);
  std::optional<SmallVector<int64_t>> intsAttr(const onnx::NodeProto &node,
                                               StringRef name);
  FailureOr<int64_t> normalizeAxis(const onnx::NodeProto &node, int64_t axis,
                                   int64_t rank);
  LogicalResult requireFloat(const onnx::NodeProto &node, Value value,
                             StringRef role);
  void define(const onnx::NodeProto &node, int index, Value value) {
    values[node.output(index)] = value;
  }
  /// Defines output `index` of `node` unless building it failed.
  LogicalResult define(const onnx::NodeProto &node, int index,
                       FailureOr<Value> value) {
    if (failed(value))
      return failure();
    define(node, index, *value);
    return success();
  }
  /// Creates a one-result `OpT` whose type it infers from `args`. Operands
  /// that do not fit together (the file is a user's) are the op's own
  /// located error and a failure here; ODS's inferring builders would end
  /// the process instead.
  template <typename OpT, typename... Args>
  FailureOr<Value> create(Location loc, Args &&...args) {
    OperationState state(loc, OpT::getOperationName());
    // Built with a placeholder result type, which inference then replaces.
    OpT::build(builder, state, builder.getNoneType(),
               std::forward<Args>(args)...);
    state.types.clear();
    SmallVector<Type, 1> types;
    MLIRContext *context = builder.getContext();
    if (failed(OpT::inferReturnTypes(context, loc, state.operands,
                                     state.attributes.getDictionary(context),
                                     state.getRawProperties(), state.regions,
                                     types)))
      return failure();
    state.addTypes(types);
    return builder.create(state)->getResult(0);
  }
  Value reshape(Value value, ArrayRef<int64_t> shape);
  Location nodeLoc(const onnx::NodeProto &node);

  LogicalResult importGemm(const onnx::NodeProto &node);
  LogicalResult importMatMul(const onnx::NodeProto &node);
  LogicalResult importReshape(const onnx::NodeProto &node);
  LogicalResult importGather(const onnx::NodeProto &node);
  /// `data` gathered along `axis` at `indices` (ONNX's Gather with known
  /// indices).
  FailureOr<Value> gatherKnown(const onnx::NodeProto &node, Value data,
                               int64_t axis, const KnownTensor &indices);
  LogicalResult importGatherND(const onnx::NodeProto &node);
  LogicalResult importReduce(const onnx::NodeProto &node);
  LogicalResult importSplit(const onnx::NodeProto &node);
  LogicalResult importSlice(const onnx::NodeProto &node);
  LogicalResult importFlatten(const onnx::NodeProto &node);
  LogicalResult importExpand(const onnx::NodeProto &node);
  LogicalResult importSqueeze(const onnx::NodeProto &node, bool unsqueeze);
  LogicalResult importCast(const onnx::NodeProto &node);
  LogicalResult importConstant(const onnx::NodeProto &node);
  LogicalResult importLayerNorm(const onnx::NodeProto &node);
  LogicalResult importTrilu(const onnx::NodeProto &node);
  // Convolutions, poolings and batch norm (ConvolutionOps.cpp).
  /// A window's geometry in parc's 2-D terms (padding [top, left, bottom,
  /// right]) from a node's kernel, strides, dilations, pads or auto_pad
  /// and ceil_mode; a 1-D window gains a unit height.
  struct Window {
    SmallVector<int64_t> kernel, strides, padding, dilations;
  };
  FailureOr<Window> importWindow(const onnx::NodeProto &node, Value input,
                                 ArrayRef<int64_t> kernel);
  Value fromImage(Value image, int64_t rank);
  /// Guards libonnx's shape inference against malformed windows.
  LogicalResult prepareWindowForInference(onnx::NodeProto &node);
  LogicalResult importConvolution(const onnx::NodeProto &node);
  LogicalResult importPooling(const onnx::NodeProto &node);
  LogicalResult importGlobalAveragePool(const onnx::NodeProto &node);
  LogicalResult importBatchNorm(const onnx::NodeProto &node);
  LogicalResult importTrainingBatchNorm(const onnx::NodeProto &node,
                                        ArrayRef<Value> operands,
                                        double epsilon);
  // Comparisons and logic over run-time values (BooleanOps.cpp).
  LogicalResult importComparison(const onnx::NodeProto &node);
  LogicalResult importLogic(const onnx::NodeProto &node);
  /// `value` as a 0/1 i32 tensor (nonzero is true), as ONNX casts to bool.
  FailureOr<Value> toBoolean(Value value, Location loc);
  /// Whether `value` holds 0/1 only: a comparison, logic, a constant of
  /// 0s and 1s, or elements moved from those.
  bool isBoolean(Value value);

  StringRef path;
  MLIRContext *context;
  OpBuilder builder;
  ArrayRef<OnnxInputShape> inputShapes;
  SmallVectorImpl<OnnxWeight> *weights;
  Location fileLoc;
  onnx::ModelProto model;
  int64_t opset = 0;
  OwningOpRef<ModuleOp> module;
  llvm::StringMap<Value> values;
  llvm::StringMap<KnownTensor> known;
  /// The float initializers: known, but arguments, never folded.
  llvm::StringSet<> parameters;
  /// IsNaN outputs, by the name of the tensor each tests; only a Where over
  /// a softmax reads them.
  llvm::StringMap<std::string> nanTests;
  /// The values that hold 0/1 only: comparisons and logic.
  llvm::DenseSet<Value> booleans;
};

} // namespace mlir::parc::onnx_import

#endif // PARC_LIB_IMPORT_IMPORTER_H
