//===- OnnxPatterns.cpp - PyTorch's unfused forms as single parc ops ------===//
//
// PyTorch exports GELU (erf form), SiLU, layer and RMS normalization as
// chains of elementwise ops. Matched here on the imported parc ops:
//
//   GELU: e = erf(x / c) with c = sqrt(2) (or erf(x * c), c = 1/sqrt(2)),
//         a = e + 1 (either order), then
//         (x * a) * 0.5  or  (x * 0.5) * a  (each product in either order)
//     -> parc.gelu erf x
//   layer norm: d = x - reduce_mean(x, [last], keepdims),
//         v = reduce_mean(pow(d, 2) or d * d, [last], keepdims),
//         n = d / sqrt(v + eps)  (add in either order),
//         optionally y = n * gamma + beta (either order each), gamma and
//         beta 1-D as long as the last axis
//     -> parc.layer_norm x, gamma, beta eps = eps (ones and zeros when absent)
//   SiLU: x * sigmoid(x) (either order) -> parc.silu x
//   RMS norm (Llama's RMSNorm, T5's layer norm):
//         s = sqrt(reduce_mean(pow(x, 2) or x * x, [last], keepdims) + eps),
//         n = x * (1 / s) or x / s, optionally y = n * gamma (either order
//         each), gamma 1-D as long as the last axis
//     -> parc.rms_norm x, gamma eps = eps (ones when absent)
//
// Constants must be parc.constant splats within 1e-4 (relative) of the
// expected value; the replaced result must have x's type. Ops left unused
// afterwards are erased.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/OnnxImporter.h"

#include "parc/IR/ParcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;

/// The value of a splat parc.constant, if `value` is one.
static std::optional<double> splatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() ||
      !isa<FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

static bool isConstant(Value value, double expected) {
  std::optional<double> actual = splatValue(value);
  return actual && std::abs(*actual - expected) <= 1e-4 * std::abs(expected);
}

/// For a commutative op `op`, the operand other than one satisfying `pred`;
/// null if neither does.
template <typename OpT, typename Pred>
static Value otherOperand(OpT op, Pred pred) {
  if (!op)
    return nullptr;
  if (pred(op.getLhs()))
    return op.getRhs();
  if (pred(op.getRhs()))
    return op.getLhs();
  return nullptr;
}

/// x if `value` is x / sqrt(2) or x * (1/sqrt(2)).
static Value geluArgument(Value value) {
  if (auto div = value.getDefiningOp<DivOp>())
    if (isConstant(div.getRhs(), M_SQRT2))
      return div.getLhs();
  return otherOperand(value.getDefiningOp<MulOp>(),
                      [](Value v) { return isConstant(v, M_SQRT1_2); });
}

static void fuseGelu(MulOp outer, OpBuilder &builder) {
  // Find x and a = 1 + erf(x / sqrt 2) among the factors of the two products.
  auto matchA = [](Value a) -> Value {
    Value erfValue = otherOperand(a.getDefiningOp<AddOp>(),
                                  [](Value v) { return isConstant(v, 1.0); });
    auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : ErfOp();
    return erf ? geluArgument(erf.getInput()) : Value();
  };
  Value x;
  // (x * a) * 0.5
  if (Value inner = otherOperand(outer, [](Value v) {
        return isConstant(v, 0.5);
      })) {
    if (auto mul = inner.getDefiningOp<MulOp>()) {
      Value fromLhs = matchA(mul.getRhs()), fromRhs = matchA(mul.getLhs());
      if (fromLhs && fromLhs == mul.getLhs())
        x = fromLhs;
      else if (fromRhs && fromRhs == mul.getRhs())
        x = fromRhs;
    }
  }
  // (x * 0.5) * a
  if (!x) {
    for (auto [half, a] : {std::pair(outer.getLhs(), outer.getRhs()),
                           std::pair(outer.getRhs(), outer.getLhs())}) {
      Value candidate = matchA(a);
      Value halved = otherOperand(half.getDefiningOp<MulOp>(),
                                  [](Value v) { return isConstant(v, 0.5); });
      if (candidate && halved == candidate)
        x = candidate;
    }
  }
  if (!x || x.getType() != outer.getType())
    return;
  builder.setInsertionPoint(outer);
  outer.replaceAllUsesWith(
      GeluOp::create(builder, outer.getLoc(), x, GeluApproximation::Erf)
          .getResult());
}

static void fuseSilu(MulOp mul, OpBuilder &builder) {
  for (auto [x, gate] : {std::pair(mul.getLhs(), mul.getRhs()),
                         std::pair(mul.getRhs(), mul.getLhs())}) {
    auto sigmoid = gate.getDefiningOp<SigmoidOp>();
    if (!sigmoid || sigmoid.getInput() != x || x.getType() != mul.getType())
      continue;
    builder.setInsertionPoint(mul);
    mul.replaceAllUsesWith(
        SiluOp::create(builder, mul.getLoc(), x).getResult());
    return;
  }
}

/// x if `value` is reduce_mean(x, [last axis], keepdims).
static Value meanOverLastAxis(Value value) {
  auto mean = value.getDefiningOp<ReduceMeanOp>();
  if (!mean || !mean.getKeepdims())
    return nullptr;
  int64_t rank = mean.getInput().getType().getRank();
  if (mean.getAxes().size() != 1 || mean.getAxes()[0] != rank - 1)
    return nullptr;
  return mean.getInput();
}

static bool isFeatureVector(Value value, int64_t features) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getRank() == 1 && type.getDimSize(0) == features;
}

/// eps if `value` is sqrt(reduce_mean(pow(x, 2) or x * x, [last axis],
/// keepdims) + eps) (the add in either order).
static std::optional<double> rootMeanSquareEpsilon(Value value, Value x) {
  auto sqrt = value.getDefiningOp<SqrtOp>();
  auto addEps = sqrt ? sqrt.getInput().getDefiningOp<AddOp>() : AddOp();
  if (!addEps)
    return std::nullopt;
  for (auto [meanSquare, e] : {std::pair(addEps.getLhs(), addEps.getRhs()),
                               std::pair(addEps.getRhs(), addEps.getLhs())}) {
    std::optional<double> eps = splatValue(e);
    Value squared = eps ? meanOverLastAxis(meanSquare) : Value();
    if (!squared)
      continue;
    if (auto pow = squared.getDefiningOp<PowOp>())
      if (pow.getLhs() == x && isConstant(pow.getRhs(), 2.0))
        return eps;
    if (auto mul = squared.getDefiningOp<MulOp>())
      if (mul.getLhs() == x && mul.getRhs() == x)
        return eps;
  }
  return std::nullopt;
}

/// The one user of `op` that multiplies its result by a feature vector,
/// and that vector; nulls otherwise.
static std::pair<MulOp, Value> scaledByFeatures(Operation *op) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!op->hasOneUse())
    return {};
  auto mul = dyn_cast<MulOp>(*op->user_begin());
  if (!mul || mul.getType() != type)
    return {};
  Value scale = mul.getLhs() == op->getResult(0) ? mul.getRhs() : mul.getLhs();
  if (!isFeatureVector(scale, type.getShape().back()))
    return {};
  return {mul, scale};
}

/// A splat constant shaped like the last axis of `like`, before `at`.
static Value featureSplat(OpBuilder &builder, Operation *at, Value like,
                          double value) {
  auto type = cast<RankedTensorType>(like.getType());
  auto vectorType =
      RankedTensorType::get({type.getShape().back()}, type.getElementType());
  builder.setInsertionPoint(at);
  return ConstantOp::create(
      builder, at->getLoc(),
      DenseElementsAttr::get(
          vectorType, builder.getFloatAttr(type.getElementType(), value)));
}

/// `normalized` is x * (1 / s) or x / s, s the root mean square of x.
static void fuseRmsNorm(Operation *normalized, OpBuilder &builder) {
  Value x, root;
  if (auto div = dyn_cast<DivOp>(normalized)) {
    x = div.getLhs();
    root = div.getRhs();
  } else if (auto mul = dyn_cast<MulOp>(normalized)) {
    for (auto [candidate, inverse] : {std::pair(mul.getLhs(), mul.getRhs()),
                                      std::pair(mul.getRhs(), mul.getLhs())}) {
      auto reciprocal = inverse.getDefiningOp<DivOp>();
      if (reciprocal && isConstant(reciprocal.getLhs(), 1.0)) {
        x = candidate;
        root = reciprocal.getRhs();
      }
    }
  }
  if (!x || x.getType() != normalized->getResult(0).getType())
    return;
  std::optional<double> eps = rootMeanSquareEpsilon(root, x);
  if (!eps)
    return;
  auto [scaled, gamma] = scaledByFeatures(normalized);
  Operation *replaced = scaled ? scaled.getOperation() : normalized;
  if (!gamma)
    gamma = featureSplat(builder, replaced, x, 1.0);
  builder.setInsertionPoint(replaced);
  replaced->getResult(0).replaceAllUsesWith(
      RmsNormOp::create(builder, replaced->getLoc(), x, gamma, APFloat(*eps))
          .getResult());
}

static void fuseLayerNorm(DivOp div, OpBuilder &builder) {
  auto centered = div.getLhs().getDefiningOp<SubOp>();
  if (!centered)
    return;
  Value x = centered.getLhs();
  if (meanOverLastAxis(centered.getRhs()) != x || x.getType() != div.getType())
    return;
  std::optional<double> eps =
      rootMeanSquareEpsilon(div.getRhs(), centered.getResult());
  if (!eps)
    return;

  Operation *replaced = div;
  Value gamma, beta;
  // An affine tail: (n * gamma) + beta.
  if (auto [scaled, scale] = scaledByFeatures(div); scaled)
    if (auto add = scaled->hasOneUse() ? dyn_cast<AddOp>(*scaled->user_begin())
                                       : AddOp()) {
      Value shift =
          add.getLhs() == scaled.getResult() ? add.getRhs() : add.getLhs();
      if (isFeatureVector(
              shift, cast<RankedTensorType>(x.getType()).getShape().back()) &&
          add.getType() == x.getType()) {
        gamma = scale;
        beta = shift;
        replaced = add;
      }
    }
  if (!gamma) {
    gamma = featureSplat(builder, replaced, x, 1.0);
    beta = featureSplat(builder, replaced, x, 0.0);
  }
  builder.setInsertionPoint(replaced);
  replaced->getResult(0).replaceAllUsesWith(
      LayerNormOp::create(builder, replaced->getLoc(), x, gamma, beta,
                          APFloat(*eps))
          .getResult());
}

void mlir::parc::fuseExportedPatterns(ModuleOp module) {
  OpBuilder builder(module.getContext());
  SmallVector<MulOp> products;
  SmallVector<DivOp> quotients;
  module.walk([&](Operation *op) {
    if (auto mul = dyn_cast<MulOp>(op))
      products.push_back(mul);
    if (auto div = dyn_cast<DivOp>(op))
      quotients.push_back(div);
  });
  // Each rewrite skips the ops an earlier one left unused.
  auto forEachUsed = [](auto &ops, auto rewrite) {
    for (auto op : ops)
      if (!op->use_empty())
        rewrite(op);
  };
  forEachUsed(quotients, [&](DivOp div) { fuseLayerNorm(div, builder); });
  forEachUsed(quotients, [&](DivOp div) { fuseRmsNorm(div, builder); });
  forEachUsed(products, [&](MulOp mul) { fuseRmsNorm(mul, builder); });
  forEachUsed(products, [&](MulOp mul) { fuseSilu(mul, builder); });
  forEachUsed(products, [&](MulOp mul) { fuseGelu(mul, builder); });
  fuseExportedAttention(module);
  refactorLayoutChains(module);
  // Erase what the rewrites left unused, users before producers.
  module.walk([&](func::FuncOp func) {
    for (Block &block : func.getBody()) {
      bool changed = true;
      while (changed) {
        changed = false;
        for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
          if (op.getDialect() && isa<ParcDialect>(op.getDialect()) &&
              op.use_empty()) {
            op.erase();
            changed = true;
          }
      }
    }
  });
}
