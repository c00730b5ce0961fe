//===- OnnxPatterns.cpp - PyTorch's unfused forms as single parc ops ------===//
//
// PyTorch exports GELU (erf form) and layer normalization as chains of
// elementwise ops. Matched here on the imported parc ops:
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

static void fuseLayerNorm(DivOp div, OpBuilder &builder) {
  auto centered = div.getLhs().getDefiningOp<SubOp>();
  if (!centered)
    return;
  Value x = centered.getLhs();
  if (meanOverLastAxis(centered.getRhs()) != x || x.getType() != div.getType())
    return;
  auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
  if (!sqrt)
    return;
  auto addEps = sqrt.getInput().getDefiningOp<AddOp>();
  if (!addEps)
    return;
  std::optional<double> eps;
  Value variance;
  for (auto [v, e] : {std::pair(addEps.getLhs(), addEps.getRhs()),
                      std::pair(addEps.getRhs(), addEps.getLhs())})
    if (std::optional<double> value = splatValue(e)) {
      eps = value;
      variance = v;
    }
  if (!eps || !variance)
    return;
  Value squared = meanOverLastAxis(variance);
  if (!squared)
    return;
  Value d = centered.getResult();
  bool isSquare = false;
  if (auto pow = squared.getDefiningOp<PowOp>())
    isSquare = pow.getLhs() == d && isConstant(pow.getRhs(), 2.0);
  if (auto mul = squared.getDefiningOp<MulOp>())
    isSquare = mul.getLhs() == d && mul.getRhs() == d;
  if (!isSquare)
    return;

  auto type = cast<RankedTensorType>(x.getType());
  int64_t features = type.getShape().back();
  Operation *replaced = div;
  Value gamma, beta;
  // An affine tail: (n * gamma) + beta.
  if (div->hasOneUse())
    if (auto mul = dyn_cast<MulOp>(*div->user_begin())) {
      Value g = mul.getLhs() == div.getResult() ? mul.getRhs() : mul.getLhs();
      if (isFeatureVector(g, features) && mul.getType() == type &&
          mul->hasOneUse())
        if (auto add = dyn_cast<AddOp>(*mul->user_begin())) {
          Value b = add.getLhs() == mul.getResult() ? add.getRhs()
                                                    : add.getLhs();
          if (isFeatureVector(b, features) && add.getType() == type) {
            gamma = g;
            beta = b;
            replaced = add;
          }
        }
    }
  builder.setInsertionPoint(replaced);
  Location loc = replaced->getLoc();
  auto vectorType = RankedTensorType::get({features}, type.getElementType());
  auto splat = [&](double value) -> Value {
    return ConstantOp::create(
        builder, loc,
        DenseElementsAttr::get(
            vectorType, builder.getFloatAttr(type.getElementType(), value)));
  };
  if (!gamma) {
    gamma = splat(1.0);
    beta = splat(0.0);
  }
  replaced->getResult(0).replaceAllUsesWith(
      LayerNormOp::create(builder, loc, x, gamma, beta, APFloat(*eps)).getResult());
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
  for (DivOp div : quotients)
    fuseLayerNorm(div, builder);
  for (MulOp mul : products)
    if (!mul->use_empty())
      fuseGelu(mul, builder);
  fuseExportedAttention(module);
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
