//===- GraphBuilder.h - builds a model function step by step ----*- C++ -*-===//

#ifndef PARC_LIB_MODELS_GRAPHBUILDER_H
#define PARC_LIB_MODELS_GRAPHBUILDER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcOps.h"

namespace mlir::parc {

/// Creates `func.func @name` in `module` and grows its argument list as the
/// body asks for parameters and inputs, so a model reads top to bottom.
/// Ops are located at the scope set by `setScope` (e.g. "h.0.attn").
class GraphBuilder {
public:
  GraphBuilder(ModuleOp module, StringRef name, Type elementType);

  /// Adds an argument with the model convention's attributes; `init` may be
  /// null (the default for its role).
  Value addArgument(ArgumentRole role, StringRef name, ArrayRef<int64_t> shape,
                    Type elementType, InitAttr init = {});
  Value addParam(StringRef name, ArrayRef<int64_t> shape, InitAttr init = {}) {
    return addArgument(ArgumentRole::Param, name, shape, elementType, init);
  }

  /// Marks the last added argument as loadable from a file tensor of
  /// `shape` (same elements in row-major order).
  void setCheckpointShape(ArrayRef<int64_t> shape);

  InitAttr constantInit(double value);
  InitAttr uniformInit(double low, double high);

  void setScope(StringRef scope);
  Location loc() const { return location; }
  OpBuilder &builder() { return b; }
  Type getElementType() const { return elementType; }

  /// x @ weight + bias for a [.., in] x [in, out] weight (GPT-2's Conv1D).
  Value linear(Value x, Value weight, Value bias);
  /// torch.nn.Linear: x @ `name`.weight^T + `name`.bias, the weight
  /// [out, in] as PyTorch stores it; the scope is `name`.
  Value torchLinear(Value x, StringRef name, int64_t out);
  /// torch.nn.Conv2d over NCHW with a square kernel, `name`.weight [filters,
  /// channels, kernel, kernel] and, when `bias`, `name`.bias [filters]; the
  /// scope is `name`.
  Value torchConv2d(Value x, StringRef name, int64_t filters, int64_t kernel,
                    int64_t stride, int64_t padding, bool bias);
  Value reshape(Value x, ArrayRef<int64_t> shape);
  /// A constant of the model's element type, `values` in row-major order.
  Value constant(ArrayRef<int64_t> shape, ArrayRef<double> values);
  /// x + update, named so that plans can lay out the residual stream
  /// (sequence parallelism pins these values).
  Value residual(Value x, Value update, StringRef name);

  /// A language model's `input_ids` and `labels` arguments, [batch, seq]
  /// token ids in [0, vocab).
  std::pair<Value, Value> addTokenArguments(int64_t batch, int64_t seq,
                                            int64_t vocab);
  /// Logits x @ head^T, head being `embeddings` or a new `lm_head.weight`,
  /// and their cross-entropy against `labels` as the only result, `loss`.
  func::FuncOp finishLanguageModel(Value x, Value embeddings, Value labels,
                                   bool tieEmbeddings);

  /// Returns `results` named `names` and fixes the function type.
  func::FuncOp finish(ValueRange results, ArrayRef<StringRef> names);

private:
  OpBuilder b;
  func::FuncOp func;
  Type elementType;
  Location location;
  SmallVector<DictionaryAttr> argumentAttrs;
};

} // namespace mlir::parc

#endif // PARC_LIB_MODELS_GRAPHBUILDER_H
