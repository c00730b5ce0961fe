//===- AttentionPatterns.cpp - exported attention as parc.attention -------===//
//
// Both torch exporters spell scaled dot-product attention out (the SDPA
// decomposition, or the eager code of the model); after import it is
//
//   scores = matmul(q * a, kt * b) [* c | / c]  [+ mask]
//   p = softmax(scores, axis = 3)
//   out = matmul(p, v)
//
// with q [B, H, S, D], kt the keys transposed ([B, H, D, T]: a transpose of
// k, the transpose that also splits heads, or a [B*H, T, D] transpose
// between reshapes), a, b, c splat constants, and k and v possibly the
// key/value heads repeated for grouped-query attention (reshape to
// [B, Hkv, 1, T, D], broadcast_to [B, Hkv, g, T, D], reshape to
// [B, H, T, D]). That becomes
//
//   out = parc.attention q, k, v [mask m] [causal] scale = a * b * c
//
// with k and v the unrepeated heads, and the mask reshaped to rank 4. A
// constant mask that is exactly the causal one (0 where key j <= query
// i + T - S, -inf or below -1e30 elsewhere, the same for every batch and
// head) becomes `causal` instead. The fully hidden rows are zeros either
// way (parc.softmax and parc.attention agree on them). Anything else is
// left as it was.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/OnnxImporter.h"

#include "parc/IR/ParcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

using namespace mlir;
using namespace mlir::parc;

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The value of a constant whose every element is the same and which does
/// not change the shape of what it multiplies (rank 0 or all sizes 1).
static std::optional<double> scalarFactor(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !isa<FloatType>(dense.getElementType()) ||
      dense.getType().getNumElements() != 1)
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

/// `value` without the scalar multiplications and divisions applied to it,
/// their factor multiplied into `scale`.
static Value peelScale(Value value, double &scale) {
  while (true) {
    if (auto mul = value.getDefiningOp<MulOp>()) {
      if (auto factor = scalarFactor(mul.getRhs());
          factor && mul.getLhs().getType() == mul.getType()) {
        scale *= *factor;
        value = mul.getLhs();
        continue;
      }
      if (auto factor = scalarFactor(mul.getLhs());
          factor && mul.getRhs().getType() == mul.getType()) {
        scale *= *factor;
        value = mul.getRhs();
        continue;
      }
    }
    if (auto div = value.getDefiningOp<DivOp>())
      if (auto factor = scalarFactor(div.getRhs());
          factor && *factor != 0 && div.getLhs().getType() == div.getType()) {
        scale /= *factor;
        value = div.getLhs();
        continue;
      }
    return value;
  }
}

/// The keys [B, H, T, D] of transposed keys `kt` [B, H, D, T], built at
/// `builder`'s point where no existing value is them.
static Value keysOf(Value kt, OpBuilder &builder) {
  RankedTensorType type = typeOf(kt);
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> keyShape = {shape[0], shape[1], shape[3], shape[2]};
  auto keyType = RankedTensorType::get(keyShape, type.getElementType());
  Location loc = kt.getLoc();
  // A transpose (the head split's, or k's own): compose it with the swap.
  if (auto transpose = kt.getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> perm = transpose.getPermutation();
    SmallVector<int64_t> composed = {perm[0], perm[1], perm[3], perm[2]};
    if (llvm::equal(composed, llvm::seq<int64_t>(0, 4)))
      return transpose.getInput();
    return TransposeOp::create(builder, loc, keyType, transpose.getInput(),
                               composed);
  }
  // reshape([B*H, D, T] = transpose(reshape(x -> [B*H, T, D]), [0, 2, 1])).
  if (auto outer = kt.getDefiningOp<ReshapeOp>())
    if (auto swap = outer.getInput().getDefiningOp<TransposeOp>())
      if (auto inner = swap.getInput().getDefiningOp<ReshapeOp>()) {
        ArrayRef<int64_t> merged = typeOf(inner.getResult()).getShape();
        ArrayRef<int64_t> source = typeOf(inner.getInput()).getShape();
        if (llvm::equal(swap.getPermutation(), ArrayRef<int64_t>{0, 2, 1}) &&
            merged.size() == 3 && merged[0] == shape[0] * shape[1] &&
            source.size() >= 2 && source.take_back(2) == merged.drop_front())
          return typeOf(inner.getInput()) == keyType
                     ? inner.getInput()
                     : ReshapeOp::create(builder, loc, keyType,
                                         inner.getInput())
                           .getResult();
      }
  return TransposeOp::create(builder, loc, keyType, kt,
                             ArrayRef<int64_t>{0, 1, 3, 2});
}

/// The key/value heads [B, Hkv, T, D] that `repeated` [B, H, T, D] repeats
/// for grouped-query attention, or `repeated` itself.
static Value unrepeatedHeads(Value repeated) {
  auto out = repeated.getDefiningOp<ReshapeOp>();
  auto broadcast =
      out ? out.getInput().getDefiningOp<BroadcastToOp>() : BroadcastToOp();
  auto in =
      broadcast ? broadcast.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!in)
    return repeated;
  ArrayRef<int64_t> heads = typeOf(repeated).getShape();
  ArrayRef<int64_t> expanded = typeOf(broadcast.getResult()).getShape();
  ArrayRef<int64_t> single = typeOf(in.getResult()).getShape();
  ArrayRef<int64_t> source = typeOf(in.getInput()).getShape();
  if (expanded.size() != 5 || single.size() != 5 || source.size() != 4 ||
      single[2] != 1 || expanded[1] * expanded[2] != heads[1] ||
      source != ArrayRef<int64_t>{expanded[0], expanded[1], expanded[3],
                                  expanded[4]} ||
      single[1] != expanded[1])
    return repeated;
  return in.getInput();
}

/// Whether constant `mask`, of shape [.., S, T] once broadcast to rank 4 as
/// `shape`, is exactly the causal mask, the same for every leading index.
static bool isCausalMask(Value mask, ArrayRef<int64_t> shape) {
  auto constant = mask.getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return false;
  int64_t queries = shape[2], keys = shape[3];
  int64_t index = 0;
  for (APFloat element : dense.getValues<APFloat>()) {
    double value = element.convertToDouble();
    int64_t i = index / keys % queries, j = index % keys;
    bool visible = j <= i + keys - queries;
    if (visible ? value != 0.0 : value > -1e30)
      return false;
    ++index;
  }
  return true;
}

static void fuseAttention(SoftmaxOp softmax, OpBuilder &builder) {
  RankedTensorType scoresType = softmax.getType();
  if (scoresType.getRank() != 4 || softmax.getAxis() != 3 ||
      !softmax->hasOneUse())
    return;
  auto product = dyn_cast<MatmulOp>(*softmax->user_begin());
  if (!product || product.getLhs() != softmax.getResult() ||
      product.getTransposeLhs() || product.getTransposeRhs() ||
      product.getContractBatch())
    return;
  ArrayRef<int64_t> scores = scoresType.getShape();

  // The scores' product, and the additive mask when there is one.
  auto matchScores = [](Value value, double &scale) {
    return peelScale(value, scale).getDefiningOp<MatmulOp>();
  };
  double scale = 1.0;
  Value mask;
  MatmulOp qk = matchScores(softmax.getInput(), scale);
  if (!qk)
    if (auto add = softmax.getInput().getDefiningOp<AddOp>())
      for (auto [candidate, other] : {std::pair(add.getLhs(), add.getRhs()),
                                      std::pair(add.getRhs(), add.getLhs())}) {
        scale = 1.0;
        if (candidate.getType() == scoresType &&
            (qk = matchScores(candidate, scale))) {
          mask = other;
          break;
        }
      }
  if (!qk || qk.getTransposeLhs() || qk.getContractBatch() ||
      qk.getType() != scoresType)
    return;
  Value query = peelScale(qk.getLhs(), scale);
  Value rhs = peelScale(qk.getRhs(), scale);
  Value value = product.getRhs();
  if (typeOf(query).getRank() != 4 || typeOf(rhs).getRank() != 4 ||
      typeOf(value).getRank() != 4 ||
      typeOf(query).getElementType() != scoresType.getElementType())
    return;

  // A mask broadcasts to the scores from rank <= 4, keys whole.
  std::optional<SmallVector<int64_t>> maskShape;
  if (mask) {
    ArrayRef<int64_t> shape = typeOf(mask).getShape();
    if (shape.size() > 4 || shape.empty() || shape.back() != scores[3] ||
        typeOf(mask).getElementType() != scoresType.getElementType())
      return;
    maskShape.emplace(4 - shape.size(), 1);
    llvm::append_range(*maskShape, shape);
    for (int64_t dim = 0; dim < 4; ++dim)
      if ((*maskShape)[dim] != scores[dim] && (*maskShape)[dim] != 1)
        return;
  }

  builder.setInsertionPoint(product);
  Location loc = product.getLoc();
  Value key = qk.getTransposeRhs() ? rhs : keysOf(rhs, builder);
  Value groupedKey = unrepeatedHeads(key),
        groupedValue = unrepeatedHeads(value);
  if (typeOf(groupedKey).getDimSize(1) == typeOf(groupedValue).getDimSize(1)) {
    key = groupedKey;
    value = groupedValue;
  }
  bool causal = false;
  if (mask && isCausalMask(mask, *maskShape)) {
    causal = true;
    mask = nullptr;
  }
  if (mask && typeOf(mask).getShape() != ArrayRef<int64_t>(*maskShape))
    mask = ReshapeOp::create(
        builder, loc,
        RankedTensorType::get(*maskShape, scoresType.getElementType()), mask);
  SmallVector<Type> inferred;
  SmallVector<Value> operands = {query, key, value};
  if (mask)
    operands.push_back(mask);
  if (failed(AttentionOp::inferReturnTypes(builder.getContext(), std::nullopt,
                                           AttentionOp::Adaptor(operands),
                                           inferred)) ||
      inferred.front() != product.getType())
    return; // the leftovers built above are erased as unused
  product.getResult().replaceAllUsesWith(
      AttentionOp::create(builder, loc, query, key, value, mask, causal,
                          APFloat(scale))
          .getResult());
}

void mlir::parc::fuseExportedAttention(ModuleOp module) {
  OpBuilder builder(module.getContext());
  SmallVector<SoftmaxOp> softmaxes;
  module.walk([&](SoftmaxOp softmax) { softmaxes.push_back(softmax); });
  for (SoftmaxOp softmax : softmaxes)
    fuseAttention(softmax, builder);
}
