//===- MakeTrainStep.cpp - a loss function as one optimizer step ----------===//

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Autodiff.h"
#include "parc/Transforms/MixedPrecision.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cstdio>
#include <limits>
#include <string>

namespace mlir::parc {
#define GEN_PASS_DEF_MAKETRAINSTEPPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

struct MakeTrainStepPass
    : public parc::impl::MakeTrainStepPassBase<MakeTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (optimizer != "adamw" && optimizer != "sgd") {
      func.emitError("--parc-make-train-step: optimizer must be adamw or "
                     "sgd, got '")
          << optimizer << "'";
      return signalPassFailure();
    }
    if (precision != "f32" && precision != "bf16-mixed") {
      func.emitError("--parc-make-train-step: precision must be f32 or "
                     "bf16-mixed, got '")
          << precision << "'";
      return signalPassFailure();
    }
    if (failed(checkHyperparameters(func)) || failed(build(func)))
      signalPassFailure();
  }

  LogicalResult checkHyperparameters(func::FuncOp func);
  LogicalResult build(func::FuncOp func);
};

} // namespace

// A NaN or out-of-range hyperparameter would train to NaN without a word.
LogicalResult MakeTrainStepPass::checkHyperparameters(func::FuncOp func) {
  struct Bound {
    StringRef name;
    double value, low, high;
    bool lowOpen;
  };
  double inf = std::numeric_limits<double>::infinity();
  Bound bounds[] = {{"lr", lr, 0, inf, true},
                    {"beta1", beta1, 0, 1, false},
                    {"beta2", beta2, 0, 1, false},
                    {"eps", epsilon, 0, inf, true},
                    {"weight-decay", weightDecay, 0, inf, false},
                    {"momentum", momentum, 0, 1, false},
                    {"clip", clip, 0, inf, false}};
  for (const Bound &bound : bounds) {
    // Upper bounds are open: a finite value below 1 or below infinity.
    bool inside = (bound.lowOpen ? bound.value > bound.low
                                 : bound.value >= bound.low) &&
                  bound.value < bound.high;
    auto text = [](double value) {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%g", value);
      return std::string(buffer);
    };
    if (!inside)
      return func.emitError("--parc-make-train-step: ")
             << bound.name << "=" << text(bound.value) << " is outside "
             << (bound.lowOpen ? "(" : "[") << text(bound.low) << ", "
             << text(bound.high) << ")";
  }
  return success();
}

/// Adds an `optstate` argument initialized to `value`.
static BlockArgument addState(func::FuncOp func, StringRef name, Type type,
                              double value) {
  Builder b(func.getContext());
  auto init = InitAttr::get(func.getContext(), InitDistribution::Constant,
                            APFloat(value), APFloat(0.0));
  unsigned index = func.getNumArguments();
  func.insertArgument(
      index, type,
      b.getDictionaryAttr(
          {b.getNamedAttr(ParcDialect::kRoleAttrName,
                          b.getStringAttr("optstate")),
           b.getNamedAttr(ParcDialect::kNameAttrName, b.getStringAttr(name)),
           b.getNamedAttr(ParcDialect::kInitAttrName, init)}),
      func.getLoc());
  return func.getArgument(index);
}

LogicalResult MakeTrainStepPass::build(func::FuncOp func) {
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  unsigned numResults = func.getNumResults();
  if (precision == "bf16-mixed" &&
      failed(applyMixedPrecision(func, BFloat16Type::get(func.getContext()))))
    return failure();
  if (failed(appendGradients(func)))
    return failure();

  Operation *terminator = func.getBody().front().getTerminator();
  OpBuilder b(terminator);
  Location loc = func.getLoc();
  SmallVector<ModelArgument> params;
  for (const ModelArgument &argument : *arguments)
    if (argument.role == ArgumentRole::Param)
      params.push_back(argument);
  SmallVector<Value> gradients(terminator->getOperands().drop_front(numResults));
  auto scalarType = RankedTensorType::get({}, b.getF32Type());

  if (clip > 0) {
    // Sum of squares of every gradient, then one scale factor for all.
    Value total;
    for (Value gradient : gradients) {
      auto type = cast<RankedTensorType>(gradient.getType());
      SmallVector<int64_t> axes =
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
      Value squares = MulOp::create(b, loc, gradient, gradient);
      Value sum = axes.empty() ? squares
                               : ReduceSumOp::create(b, loc, squares, axes,
                                                     /*keepdims=*/false);
      total = total ? Value(AddOp::create(b, loc, total, sum)) : sum;
    }
    Value scale = ClipCoefficientOp::create(b, loc, total, APFloat(clip));
    for (Value &gradient : gradients)
      gradient = MulOp::create(b, loc, gradient, scale);
  }

  Value step = addState(func, "optimizer.step", scalarType, 1.0);
  SmallVector<Value> results(terminator->getOperands().take_front(numResults));
  SmallVector<std::string> names = getResultNames(func);
  names.resize(numResults);
  SmallVector<std::pair<Value, std::string>> stateUpdates;
  for (auto [param, gradient] : llvm::zip_equal(params, gradients)) {
    Value value = func.getArgument(param.index);
    if (optimizer == "adamw") {
      Value m = addState(func, param.name + ".adam_m", param.type, 0.0);
      Value v = addState(func, param.name + ".adam_v", param.type, 0.0);
      auto update = AdamWUpdateOp::create(
          b, loc, value, gradient, m, v, step, APFloat(lr.getValue()),
          APFloat(beta1.getValue()), APFloat(beta2.getValue()),
          APFloat(epsilon.getValue()), APFloat(weightDecay.getValue()));
      results.push_back(update.getNewParam());
      names.push_back(param.name);
      stateUpdates.push_back({update.getNewFirstMoment(), param.name + ".adam_m"});
      stateUpdates.push_back(
          {update.getNewSecondMoment(), param.name + ".adam_v"});
    } else {
      Value buffer = addState(func, param.name + ".momentum", param.type, 0.0);
      auto update = SgdUpdateOp::create(b, loc, value, gradient, buffer,
                                        APFloat(lr.getValue()),
                                        APFloat(momentum.getValue()));
      results.push_back(update.getNewParam());
      names.push_back(param.name);
      stateUpdates.push_back(
          {update.getNewMomentumBuffer(), param.name + ".momentum"});
    }
  }
  for (auto &[value, name] : stateUpdates) {
    results.push_back(value);
    names.push_back(name);
  }
  Value one = ConstantOp::create(
      b, loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(1.0f)));
  results.push_back(AddOp::create(b, loc, step, one));
  names.push_back("optimizer.step");

  terminator->setOperands(results);
  SmallVector<Type> types;
  for (Value result : results)
    types.push_back(result.getType());
  func.setFunctionType(b.getFunctionType(func.getArgumentTypes(), types));
  SmallVector<DictionaryAttr> resultAttrs;
  for (const std::string &name : names)
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(ParcDialect::kNameAttrName, b.getStringAttr(name))));
  func.setAllResultAttrs(resultAttrs);
  tagUntaggedOps(func, Phase::Update);
  return success();
}
