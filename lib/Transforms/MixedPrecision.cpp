//===- MixedPrecision.cpp - a model's activations in bf16 -----------------===//
//
// Each op runs in one of three ways, decided from its operands in program
// order:
//   - with no float operand (constants, iota): unchanged; its f32 results
//     are master values, as arguments are;
//   - full precision: it is KeepsFullPrecision or reads a value computed in
//     full precision; its 16-bit operands are cast up, its results stay f32;
//   - low precision (everything else that stores an f32 result): its f32
//     master operands are cast down at this use and its f32 results become
//     16-bit; an op that stores no f32 result reads its operands as they
//     are.
// A cast per use, not per value, keeps the gradient of a weight read twice
// (tied embeddings) summed in f32 after each use's gradient is cast up.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/MixedPrecision.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir::parc {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

static bool hasElementType(Value value, Type element) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType() == element;
}

static Value castTo(OpBuilder &b, Value value, Type element) {
  auto type = cast<RankedTensorType>(value.getType()).clone(element);
  return CastOp::create(b, value.getLoc(), type, value);
}

LogicalResult mlir::parc::applyMixedPrecision(func::FuncOp func,
                                              FloatType lowType,
                                              bool lowPrecisionParameters) {
  if (func.isExternal())
    return success();
  MLIRContext *context = func.getContext();
  Type f32 = Float32Type::get(context);
  // The f32 values computed in full precision: they keep their readers f32.
  llvm::DenseSet<Value> fullPrecision;
  if (auto made = func->getAttrOfType<StringAttr>(kPrecisionAttrName))
    return func.emitError()
           << "@" << func.getName() << " is in mixed precision already ("
           << kPrecisionAttrName << " = \"" << made.getValue() << "\")";
  Block &body = func.getBody().front();
  // Gradients and updates would keep the forward's types only by chance.
  for (Operation &op : body.without_terminator())
    if (getPhase(&op) != Phase::Forward)
      return op.emitError("mixed precision is decided before the gradients, "
                          "and this op is part of a train step's backward "
                          "pass or update (make the step with "
                          "--parc-make-train-step=precision=bf16-mixed)");
  if (lowPrecisionParameters) {
    for (BlockArgument argument : body.getArguments()) {
      auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                    ParcDialect::kRoleAttrName);
      if (role && role.getValue() == "param" && hasElementType(argument, f32))
        argument.setType(
            cast<RankedTensorType>(argument.getType()).clone(lowType));
    }
    func.setFunctionType(FunctionType::get(context, body.getArgumentTypes(),
                                           func.getResultTypes()));
  }
  OpBuilder b(context);
  auto isFloat = [&](Value v) {
    return hasElementType(v, f32) || hasElementType(v, lowType);
  };
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    if (llvm::none_of(op.getOperands(), isFloat))
      continue;
    b.setInsertionPoint(&op);
    bool full = op.hasTrait<KeepsFullPrecision>() ||
                llvm::any_of(op.getOperands(), [&](Value v) {
                  return fullPrecision.contains(v);
                });
    // An op that stores no f32 result (a cast to integers or to bf16
    // already, a comparison) has nothing to store in 16 bits: it reads its
    // operands as they are.
    if (!full && llvm::none_of(op.getResults(), [&](Value result) {
          return hasElementType(result, f32);
        }))
      continue;
    for (OpOperand &operand : op.getOpOperands()) {
      Value value = operand.get();
      if (full && hasElementType(value, lowType))
        operand.set(castTo(b, value, f32));
      else if (!full && hasElementType(value, f32))
        operand.set(castTo(b, value, lowType));
    }
    for (OpResult result : op.getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      if (full) {
        // A model stored in 16 bits computes this op in f32 too: its
        // results follow its operands up (a cast keeps the type it names).
        if (!isa<CastOp>(op) && type.getElementType() == lowType)
          result.setType(type.clone(f32));
        if (hasElementType(result, f32))
          fullPrecision.insert(result);
      } else if (type.getElementType() == f32) {
        result.setType(type.clone(lowType));
      }
    }
  }
  // The results keep their declared types.
  Operation *terminator = body.getTerminator();
  b.setInsertionPoint(terminator);
  for (auto [operand, type] :
       llvm::zip_equal(terminator->getOpOperands(), func.getResultTypes()))
    if (isFloat(operand.get()) && operand.get().getType() != type)
      operand.set(
          castTo(b, operand.get(), cast<ShapedType>(type).getElementType()));
  func->setAttr(
      kPrecisionAttrName,
      StringAttr::get(context, lowType.isBF16() ? "bf16-mixed" : "f16-mixed"));
  return success();
}

namespace {
struct MixedPrecisionPass
    : public parc::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = func.getContext();
    FloatType lowType;
    if (type == "bf16")
      lowType = BFloat16Type::get(context);
    else if (type == "f16")
      lowType = Float16Type::get(context);
    else {
      func.emitError("--parc-mixed-precision: type must be bf16 or f16, got '")
          << type << "'";
      return signalPassFailure();
    }
    if (failed(applyMixedPrecision(func, lowType)))
      signalPassFailure();
  }
};
} // namespace
