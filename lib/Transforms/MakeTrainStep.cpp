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

/// f32's largest power of two: a loss scale above it doubles to infinity.
static constexpr double kMaxLossScale = 0x1p127;
static constexpr double kMaxLossScaleWindow = 0x1p24 + 1;
// PyTorch GradScaler's init_scale and growth_interval, as Passes.td says.
static constexpr double kDefaultLossScale = 65536;
static constexpr int64_t kDefaultLossScaleWindow = 2000;

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
    if (precision != "f32" && precision != "bf16-mixed" &&
        precision != "f16-mixed") {
      func.emitError("--parc-make-train-step: precision must be f32, "
                     "bf16-mixed or f16-mixed, got '")
          << precision << "'";
      return signalPassFailure();
    }
    // bf16 needs no scaling (its range is f32's). (Options built in code
    // all count as given, so the test is against the defaults.)
    if (precision != "f16-mixed" &&
        (lossScale != kDefaultLossScale ||
         lossScaleWindow != kDefaultLossScaleWindow)) {
      func.emitError("--parc-make-train-step: loss-scale and "
                     "loss-scale-window scale an f16-mixed step's loss; "
                     "precision is '")
          << precision << "'";
      return signalPassFailure();
    }
    if (failed(checkMasterWeights(func)) || failed(checkHyperparameters(func)) ||
        failed(build(func)))
      signalPassFailure();
  }

  /// The optimizer updates f32 master weights; 16-bit training comes from
  /// an f32 model through `precision`.
  LogicalResult checkMasterWeights(func::FuncOp func) {
    for (BlockArgument argument : func.getArguments()) {
      auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                    ParcDialect::kRoleAttrName);
      Type element = getElementTypeOrSelf(argument.getType());
      if (!role || role.getValue() != "param" || element.isF32())
        continue;
      auto name = func.getArgAttrOfType<StringAttr>(
          argument.getArgNumber(), ParcDialect::kNameAttrName);
      return emitError(argument.getLoc())
             << "--parc-make-train-step: parameter '"
             << (name ? name.getValue() : StringRef("?")) << "' is "
             << element
             << "; the optimizer keeps f32 master weights: make the model "
                "in f32 and the step with precision=bf16-mixed or f16-mixed";
    }
    return success();
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
                    {"clip", clip, 0, inf, false},
                    {"loss-scale", lossScale, 0, kMaxLossScale, true},
                    // The growth tracker counts in f32, exact up to 2^24.
                    {"loss-scale-window", double(lossScaleWindow), 1,
                     kMaxLossScaleWindow, false}};
  for (const Bound &bound : bounds) {
    // Upper bounds are open: a finite value below 1 or below infinity.
    bool inside = (bound.lowOpen ? bound.value > bound.low
                                 : bound.value >= bound.low) &&
                  bound.value < bound.high;
    auto text = [](double value) {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.10g", value);
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

static Value scalarConstant(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

/// The sum over every gradient of `perElement(gradient)`'s elements.
static Value sumOverGradients(OpBuilder &b, Location loc,
                              ArrayRef<Value> gradients,
                              llvm::function_ref<Value(Value)> perElement) {
  Value total;
  for (Value gradient : gradients) {
    auto type = cast<RankedTensorType>(gradient.getType());
    SmallVector<int64_t> axes =
        llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
    Value values = perElement(gradient);
    Value sum = axes.empty() ? values
                             : ReduceSumOp::create(b, loc, values, axes,
                                                   /*keepdims=*/false);
    total = total ? Value(AddOp::create(b, loc, total, sum)) : sum;
  }
  return total;
}

/// Adds an `optstate` argument that starts as `start` says (a #parc.init or
/// a parc.init_from).
static BlockArgument addState(func::FuncOp func, StringRef name, Type type,
                              NamedAttribute start) {
  Builder b(func.getContext());
  unsigned index = func.getNumArguments();
  func.insertArgument(
      index, type,
      b.getDictionaryAttr(
          {b.getNamedAttr(ParcDialect::kRoleAttrName,
                          b.getStringAttr("optstate")),
           b.getNamedAttr(ParcDialect::kNameAttrName, b.getStringAttr(name)),
           start}),
      func.getLoc());
  return func.getArgument(index);
}

/// Adds an `optstate` argument initialized to `value`.
static BlockArgument addState(func::FuncOp func, StringRef name, Type type,
                              double value) {
  MLIRContext *context = func.getContext();
  auto init = InitAttr::get(context, InitDistribution::Constant, APFloat(value),
                            APFloat(0.0));
  return addState(
      func, name, type,
      NamedAttribute(StringAttr::get(context, ParcDialect::kInitAttrName),
                     init));
}

LogicalResult MakeTrainStepPass::build(func::FuncOp func) {
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  unsigned numResults = func.getNumResults();
  MLIRContext *context = func.getContext();
  // Mixed precision stores the parameters in 16 bits, as the forward and
  // backward passes read them, and their f32 master copies as optimizer
  // state (Micikevicius et al. 2018; Rajbhandari et al.'s 2 + 2 + 12 bytes
  // per parameter): the update steps the master, and the parameter's next
  // value is the master's, rounded.
  bool mixed = precision != "f32";
  if (mixed &&
      failed(applyMixedPrecision(func,
                                 precision == "bf16-mixed"
                                     ? FloatType(BFloat16Type::get(context))
                                     : FloatType(Float16Type::get(context)),
                                 /*lowPrecisionParameters=*/true)))
    return failure();
  // f16's range (65504 down to 6e-8) loses small gradients: the backward
  // pass starts from the loss scale instead of 1, as PyTorch's GradScaler.
  auto scalarType = RankedTensorType::get({}, Float32Type::get(context));
  Value lossScale, growthTracker;
  if (precision == "f16-mixed") {
    lossScale = addState(func, "loss_scale.scale", scalarType, this->lossScale);
    growthTracker =
        addState(func, "loss_scale.growth_tracker", scalarType, 0.0);
  }
  if (failed(appendGradients(func, lossScale)))
    return failure();

  Operation *terminator = func.getBody().front().getTerminator();
  OpBuilder b(terminator);
  Location loc = func.getLoc();
  SmallVector<ModelArgument> params;
  for (const ModelArgument &argument : *arguments)
    if (argument.role == ArgumentRole::Param)
      params.push_back(argument);
  SmallVector<Value> gradients(terminator->getOperands().drop_front(numResults));

  // What the updates read of a gradient: f32, unscaled. It is built anew
  // next to each reader, so that an f32 copy of every gradient is never
  // live at once: the gradients stay as the backward pass leaves them.
  Value inverseScale;
  if (lossScale)
    inverseScale =
        DivOp::create(b, loc, scalarConstant(b, loc, 1.0), lossScale);
  auto unscaled = [&](Value gradient) -> Value {
    auto type = cast<RankedTensorType>(gradient.getType());
    if (!type.getElementType().isF32())
      gradient = CastOp::create(b, loc, type.clone(b.getF32Type()), gradient);
    if (inverseScale)
      gradient = MulOp::create(b, loc, gradient, inverseScale);
    return gradient;
  };

  // Unscaled, the gradients show an overflow of the scaled backward pass as
  // infinities or NaNs: `overflow`, the sum of every gradient times 0, is
  // NaN then and 0 otherwise (IEEE 754: inf * 0 is NaN). The updates skip
  // on it (their `skip` operand), in place as ever; a select on it (nonzero,
  // NaN included, picks its first value) keeps the step count.
  Value overflow;
  if (lossScale) {
    Value zero = scalarConstant(b, loc, 0.0);
    overflow = sumOverGradients(b, loc, gradients, [&](Value gradient) {
      return MulOp::create(b, loc, unscaled(gradient), zero);
    });
  }

  // Sum of squares of every gradient, then one scale factor for all.
  Value clipScale;
  if (clip > 0) {
    Value total = sumOverGradients(b, loc, gradients, [&](Value gradient) {
      Value value = unscaled(gradient);
      return MulOp::create(b, loc, value, value);
    });
    clipScale = ClipCoefficientOp::create(b, loc, total, APFloat(clip));
  }

  Value step = addState(func, "optimizer.step", scalarType, 1.0);
  SmallVector<Value> results(terminator->getOperands().take_front(numResults));
  SmallVector<std::string> names = getResultNames(func);
  names.resize(numResults);
  SmallVector<std::pair<Value, std::string>> stateUpdates;
  for (auto [param, rawGradient] : llvm::zip_equal(params, gradients)) {
    Value gradient = unscaled(rawGradient);
    if (clipScale)
      gradient = MulOp::create(b, loc, gradient, clipScale);
    Value parameter = func.getArgument(param.index);
    Value value = parameter;
    // (C++17 lambdas cannot capture structured bindings.)
    std::string masterName = param.name + ".master";
    if (mixed) {
      value = addState(func, masterName, param.type,
                       b.getNamedAttr(ParcDialect::kInitFromAttrName,
                                      b.getStringAttr(param.name)));
    }
    // The parameter's next value, from the updated master in mixed precision.
    auto nextParameter = [&](Value updated) {
      if (!mixed)
        return updated;
      stateUpdates.push_back({updated, masterName});
      return Value(CastOp::create(b, loc, parameter.getType(), updated));
    };
    if (optimizer == "adamw") {
      Value m = addState(func, param.name + ".adam_m", param.type, 0.0);
      Value v = addState(func, param.name + ".adam_v", param.type, 0.0);
      auto update = AdamWUpdateOp::create(
          b, loc, value, gradient, m, v, step, overflow, APFloat(lr.getValue()),
          APFloat(beta1.getValue()), APFloat(beta2.getValue()),
          APFloat(epsilon.getValue()), APFloat(weightDecay.getValue()));
      results.push_back(nextParameter(update.getNewParam()));
      names.push_back(param.name);
      stateUpdates.push_back({update.getNewFirstMoment(), param.name + ".adam_m"});
      stateUpdates.push_back(
          {update.getNewSecondMoment(), param.name + ".adam_v"});
    } else {
      Value buffer = addState(func, param.name + ".momentum", param.type, 0.0);
      auto update = SgdUpdateOp::create(b, loc, value, gradient, buffer,
                                        overflow, APFloat(lr.getValue()),
                                        APFloat(momentum.getValue()));
      results.push_back(nextParameter(update.getNewParam()));
      names.push_back(param.name);
      stateUpdates.push_back(
          {update.getNewMomentumBuffer(), param.name + ".momentum"});
    }
  }
  for (auto &[value, name] : stateUpdates) {
    results.push_back(value);
    names.push_back(name);
  }
  Value one = scalarConstant(b, loc, 1.0);
  Value nextStep = AddOp::create(b, loc, step, one);
  results.push_back(
      overflow ? SelectOp::create(b, loc, overflow, step, nextStep) : nextStep);
  names.push_back("optimizer.step");
  if (lossScale) {
    // GradScaler's update: halve the scale after an overflow; double it
    // after `window` steps without one. The tracker t + 1 is at most the
    // window, so relu(t + 1 - (window - 1)) is 1 exactly at the window and
    // 0 before it.
    Value counted = AddOp::create(b, loc, growthTracker, one);
    Value grow = ReluOp::create(
        b, loc,
        SubOp::create(b, loc, counted,
                      scalarConstant(b, loc, double(lossScaleWindow) - 1)));
    Value grownScale = AddOp::create(b, loc, lossScale,
                                     MulOp::create(b, loc, lossScale, grow));
    Value nextTracker =
        SubOp::create(b, loc, counted, MulOp::create(b, loc, counted, grow));
    results.push_back(SelectOp::create(
        b, loc, overflow,
        MulOp::create(b, loc, lossScale, scalarConstant(b, loc, 0.5)),
        grownScale));
    names.push_back("loss_scale.scale");
    results.push_back(SelectOp::create(
        b, loc, overflow, scalarConstant(b, loc, 0.0), nextTracker));
    names.push_back("loss_scale.growth_tracker");
  }

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
