//===- Autodiff.cpp - reverse-mode gradients of a scalar loss -------------===//

#include "parc/Transforms/Autodiff.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::parc {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

static Value zerosLike(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(tensor,
                             b.getFloatAttr(tensor.getElementType(), 0.0)));
}

LogicalResult mlir::parc::appendGradients(func::FuncOp func,
                                          Value lossGradient) {
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  auto lossType = func.getNumResults()
                      ? dyn_cast<RankedTensorType>(func.getResultTypes()[0])
                      : RankedTensorType();
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return func.emitError("autodiff needs a function whose first result is a "
                          "scalar float loss");

  tagUntaggedOps(func, Phase::Forward);
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  OpBuilder b(terminator);
  Location loc = terminator->getLoc();

  // The gradient of the loss with respect to each value, summed over uses.
  llvm::DenseMap<Value, Value> gradients;
  auto accumulate = [&](Value value, Value gradient) {
    auto [it, inserted] = gradients.try_emplace(value, gradient);
    if (!inserted)
      it->second = AddOp::create(b, loc, it->second, gradient);
  };
  if (lossGradient && lossGradient.getType() != lossType)
    return func.emitError("the loss gradient's type ")
           << lossGradient.getType() << " is not the loss's " << lossType;
  Value loss = terminator->getOperand(0);
  accumulate(
      loss,
      lossGradient
          ? lossGradient
          : ConstantOp::create(
                b, loc,
                DenseElementsAttr::get(
                    lossType, b.getFloatAttr(lossType.getElementType(), 1.0))));

  SmallVector<Operation *> forward;
  for (Operation &op : body)
    if (&op != terminator)
      forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGradients;
    bool any = false;
    for (Value result : op->getResults()) {
      Value gradient = gradients.lookup(result);
      any |= static_cast<bool>(gradient);
      resultGradients.push_back(gradient ? gradient
                                         : zerosLike(b, loc, result.getType()));
    }
    if (!any)
      continue;
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no gradient rule; autodiff cannot "
                             "differentiate the loss through it");
    b.setInsertionPoint(terminator);
    FailureOr<SmallVector<Value>> operandGradients =
        rule.buildGradients(b, resultGradients);
    if (failed(operandGradients))
      return failure();
    for (auto [operand, gradient] :
         llvm::zip_equal(op->getOperands(), *operandGradients))
      if (gradient)
        accumulate(operand, gradient);
  }

  SmallVector<Value> results(terminator->getOperands());
  SmallVector<std::string> names;
  for (const ModelArgument &argument : *arguments) {
    if (argument.role != ArgumentRole::Param)
      continue;
    Value gradient = gradients.lookup(func.getArgument(argument.index));
    results.push_back(gradient ? gradient
                               : zerosLike(b, loc, argument.type));
    names.push_back(argument.name + ".grad");
  }
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned index = 0; index < func.getNumResults(); ++index)
    resultAttrs.push_back(func.getResultAttrDict(index)
                              ? func.getResultAttrDict(index)
                              : b.getDictionaryAttr({}));
  for (const std::string &name : names)
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        ParcDialect::kNameAttrName, b.getStringAttr(name))));
  terminator->setOperands(results);
  SmallVector<Type> resultTypes;
  for (Value result : results)
    resultTypes.push_back(result.getType());
  func.setFunctionType(
      b.getFunctionType(func.getArgumentTypes(), resultTypes));
  func.setAllResultAttrs(resultAttrs);

  // Gradients nobody needs (of inputs, of constants) are dropped.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  tagUntaggedOps(func, Phase::Backward);
  return success();
}

namespace {
struct AutodiffPass : public parc::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.isExternal() && failed(appendGradients(func)))
      signalPassFailure();
  }
};
} // namespace
