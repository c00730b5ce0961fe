//===- ModelConvention.h - how a function describes a model -----*- C++ -*-===//
//
// A model is a func.func whose arguments carry `parc.role` (param, input,
// label) and a unique `parc.name`, optionally `parc.init`; results may carry
// `parc.name`. Weights files, plans and the runtime find tensors by name.
//
//   func.func @forward(
//       %w: tensor<16x4xf32> {parc.role = "param", parc.name = "fc1.weight"},
//       %x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"})
//       -> (tensor<8x4xf32> {parc.name = "y"})
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_MODELCONVENTION_H
#define PARC_IR_MODELCONVENTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "parc/IR/ParcAttrs.h"

#include <set>
#include <string>

namespace mlir::parc {

/// `optstate` arguments hold optimizer state (moments, step count): they
/// persist across steps like parameters and travel in checkpoints. `buffer`
/// arguments are a model's own state that it updates but does not train
/// (batch norm's running statistics, PyTorch's buffers): the forward
/// function returns each one's next value under its name, they persist and
/// travel in checkpoints and weights files as parameters do. `carry`
/// arguments are state a pipeline's own prologue sets and each step passes
/// to the next on the same rank (PipeDream-2BW's stale weights and
/// activations in flight across steps): never loaded, gathered or written.
enum class ArgumentRole { Param, Input, Label, OptState, Buffer, Carry };

StringRef stringifyArgumentRole(ArgumentRole role);

struct ModelArgument {
  unsigned index;
  ArgumentRole role;
  std::string name;
  RankedTensorType type;
  /// Null when the argument does not say how to initialize it.
  InitAttr init;
  /// The shape of the tensor in checkpoint files, when it differs from
  /// `type`'s (same elements, row-major).
  std::optional<SmallVector<int64_t>> checkpointShape;
  /// The argument whose start this one's start is (`parc.init_from`).
  std::optional<std::string> initFrom;
};

/// Tensors larger than this are errors: sizes in bytes and elements must
/// never wrap int64 anywhere in the compiler or the runtime.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 62;
/// The bytes of a static tensor type, or nullopt when it is not one or holds
/// more than kMaxTensorBytes.
std::optional<int64_t> getCheckedTensorBytes(Type type);
/// Fails with a diagnostic at the first argument or op result of `func`
/// whose tensor holds more than kMaxTensorBytes.
LogicalResult checkTensorSizes(func::FuncOp func);

/// Reads the arguments of a model function, emitting a diagnostic at the
/// offending argument when one breaks the convention: a missing or unknown
/// role, a missing or repeated name, a type that is not a static tensor of
/// f32/bf16/f16/i32/i64, a repeated result name.
FailureOr<SmallVector<ModelArgument>> readModelArguments(func::FuncOp func);

/// The parameter argument of `func` that an optimizer update of `updated`
/// steps: `updated` itself, or the argument whose f32 master copy it is
/// (`parc.init_from`) in mixed precision; null when `updated` is neither.
BlockArgument getSteppedParameter(func::FuncOp func, Value updated);

/// The model function of `module`: the function named `name` when given,
/// else @forward, else the only function; null when there is none.
func::FuncOp findModelFunction(ModuleOp module, StringRef name = "");

/// Marks the clones of forward ops that activation recomputation runs again
/// in the backward pass, with the plan position ("@N") of the op each copies
/// (-1 for an op without one).
constexpr StringLiteral kRecomputedAttrName = "parc.recomputed";

/// The ops a plan key "@N" counts, in program order: the parc ops of `func`
/// (not the dist ops a plan inserts, not the return, not the recomputed
/// clones). A train step keeps its forward ops first and in order, so
/// positions hold across it, and across recomputation, which --parc-apply-plan
/// runs before it reads the positions.
SmallVector<Operation *> getPlanPositionedOps(func::FuncOp func);

/// Recomputation's copies in `func`, by the plan position of the op each
/// copies: a plan's layout for "@N" is its copies' too.
llvm::DenseMap<int64_t, SmallVector<Operation *>>
getRecomputedCopies(func::FuncOp func);

/// The layers of a model, numbered 0, 1, ... in the order of the first
/// argument of each. An argument belongs to the layer its name names up to
/// and including its first all-digit component: "h.11" of GPT-2's
/// `h.11.attn.c_attn.weight`, "layer2.1" of torchvision's
/// `layer2.1.conv1.weight`, "features.10" of VGG's `features.10.weight`. A
/// name without such a component belongs to no layer.
class LayerNumbering {
public:
  explicit LayerNumbering(func::FuncOp func);
  /// The layer of the argument named `name`, if it belongs to one of `func`'s.
  std::optional<int64_t> lookup(StringRef name) const;
  int64_t size() const { return layers.size(); }

private:
  llvm::StringMap<int64_t> layers;
};
/// The layer numbers of `func`'s arguments: 0 to LayerNumbering's size - 1.
std::set<int64_t> getLayerIndices(func::FuncOp func);

/// The part of a train step an op belongs to, as autodiff and the train
/// step tag it (`parc.phase`): pipeline schedules and recomputation need
/// the forward and backward ops apart. Untagged ops are forward ops.
enum class Phase { Forward, Backward, Update };
constexpr StringLiteral kPhaseAttrName = "parc.phase";
Phase getPhase(Operation *op);
void setPhase(Operation *op, Phase phase);
/// Tags every op of `func`'s body that has no phase yet (not the return).
void tagUntaggedOps(func::FuncOp func, Phase phase);

/// A pipelined program is one function per stage, each marked with its
/// index on the pipeline axis (--parc-pipeline-partition), and with the
/// pipeline (`dist.pipeline`: its axis, schedule, micro-batches).
constexpr StringLiteral kStageAttrName = "dist.stage";
constexpr StringLiteral kPipelineAttrName = "dist.pipeline";
/// The stage functions of `module` in stage order; empty when it is not
/// pipelined. Fails with a diagnostic unless they are numbered 0, 1, ...
FailureOr<SmallVector<func::FuncOp>> getStageFunctions(ModuleOp module);

/// A train step with dedicated parameter servers is marked with the mesh
/// axis whose coordinates are its two stages, workers and servers
/// (`{axis = "ps"}`): --parc-apply-plan marks it and
/// --parc-parameter-server cuts it into the two stage functions.
constexpr StringLiteral kParameterServerAttrName = "dist.parameter_server";

/// The mesh axis whose coordinate picks a stage function's ranks: the
/// pipeline's (`dist.pipeline`) or the parameter servers' axis; null for a
/// function that is no stage.
StringAttr getStageAxis(func::FuncOp stageFunc);

/// An asynchronous pipeline (PipeDream-2BW) runs a prologue once before
/// the first step of each stage: a function marked with the stage
/// function it precedes, whose results set that function's `carry`
/// arguments of the same names.
constexpr StringLiteral kPrologueOfAttrName = "dist.prologue_of";
/// The prologue of `stageFunc`, or null when it has none.
func::FuncOp getPrologue(func::FuncOp stageFunc);

/// Whether local SGD averages `argument` between its replicas' steps: a
/// float parameter or buffer, or optimizer state when
/// `averageOptimizerState`. The launcher applies the same rule
/// (runtime/main/Averaging.cpp, which is MLIR-free).
bool isAveragedByLocalSgd(const ModelArgument &argument,
                          bool averageOptimizerState);

/// The name of each result: its `parc.name`, else `result<N>`.
SmallVector<std::string> getResultNames(func::FuncOp func);

} // namespace mlir::parc

#endif // PARC_IR_MODELCONVENTION_H
