//===- GradientRules.cpp - the vector-Jacobian product of each op ---------===//
//
// Each rule builds, from the gradients of an op's results, the gradients of
// its operands, as parc ops. Broadcasting operands get their gradient summed
// back to their shape. Integer operands (ids, labels) get none.
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ParcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::parc;

using Gradients = FailureOr<SmallVector<Value>>;

static RankedTensorType tensorType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static Value scalar(OpBuilder &b, Location loc, Type element, double value) {
  auto type = RankedTensorType::get({}, element);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getFloatAttr(element, value)));
}

/// Sums `gradient` (of the broadcast result's shape) back to `target`, the
/// shape of an operand that numpy broadcasting stretched.
static Value sumToShape(OpBuilder &b, Location loc, Value gradient,
                        RankedTensorType target) {
  RankedTensorType type = tensorType(gradient);
  if (type == target)
    return gradient;
  int64_t extra = type.getRank() - target.getRank();
  SmallVector<int64_t> axes;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (dim < extra ||
        (target.getDimSize(dim - extra) == 1 && type.getDimSize(dim) != 1))
      axes.push_back(dim);
  if (!axes.empty())
    gradient = ReduceSumOp::create(b, loc, gradient, axes, /*keepdims=*/true);
  return ReshapeOp::create(b, loc, target, gradient);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Gradients AddOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0];
  return SmallVector<Value>{sumToShape(b, getLoc(), g, getLhs().getType()),
                            sumToShape(b, getLoc(), g, getRhs().getType())};
}

Gradients SubOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0];
  return SmallVector<Value>{sumToShape(b, getLoc(), g, getLhs().getType()),
                            sumToShape(b, getLoc(),
                                       NegOp::create(b, getLoc(), g),
                                       getRhs().getType())};
}

Gradients MulOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0];
  return SmallVector<Value>{
      sumToShape(b, getLoc(), MulOp::create(b, getLoc(), g, getRhs()),
                 getLhs().getType()),
      sumToShape(b, getLoc(), MulOp::create(b, getLoc(), g, getLhs()),
                 getRhs().getType())};
}

// d(l / r) = dl / r - dr * (l / r) / r.
Gradients DivOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0];
  Value lhsGrad = DivOp::create(b, getLoc(), g, getRhs());
  Value rhsGrad = NegOp::create(
      b, getLoc(),
      DivOp::create(b, getLoc(), MulOp::create(b, getLoc(), g, getResult()),
                    getRhs()));
  return SmallVector<Value>{
      sumToShape(b, getLoc(), lhsGrad, getLhs().getType()),
      sumToShape(b, getLoc(), rhsGrad, getRhs().getType())};
}

// d(l ^ r) = r l^(r - 1) dl + l^r log(l) dr.
Gradients PowOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0];
  Location loc = getLoc();
  Type element = getType().getElementType();
  Value rMinusOne =
      SubOp::create(b, loc, getRhs(), scalar(b, loc, element, 1.0));
  Value lhsGrad =
      MulOp::create(b, loc, g,
                    MulOp::create(b, loc, getRhs(),
                                  PowOp::create(b, loc, getLhs(), rMinusOne)));
  Value rhsGrad = MulOp::create(
      b, loc, g,
      MulOp::create(b, loc, getResult(), LogOp::create(b, loc, getLhs())));
  return SmallVector<Value>{sumToShape(b, loc, lhsGrad, getLhs().getType()),
                            sumToShape(b, loc, rhsGrad, getRhs().getType())};
}

// d sqrt(x) = dx / (2 sqrt(x)).
Gradients SqrtOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Location loc = getLoc();
  Value half = scalar(b, loc, getType().getElementType(), 0.5);
  return SmallVector<Value>{DivOp::create(
      b, loc, MulOp::create(b, loc, gradients[0], half), getResult())};
}

// d erf(x) = 2 / sqrt(pi) exp(-x^2) dx.
Gradients ErfOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Location loc = getLoc();
  Value x = getInput();
  Value scale = scalar(b, loc, getType().getElementType(), 1.1283791670955126);
  Value slope = MulOp::create(
      b, loc, scale,
      ExpOp::create(b, loc,
                    NegOp::create(b, loc, MulOp::create(b, loc, x, x))));
  return SmallVector<Value>{MulOp::create(b, loc, gradients[0], slope)};
}

// The gradient flows to the operand each element was selected from; the
// condition gets none.
Gradients SelectOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Location loc = getLoc();
  Value g = gradients[0];
  SmallVector<Value> result = {Value()};
  Type element = getType().getElementType();
  for (Value operand : {getLhs(), getRhs()}) {
    auto type = tensorType(operand);
    if (!isa<FloatType>(element)) {
      result.push_back(Value());
      continue;
    }
    Value zero = scalar(b, loc, element, 0.0);
    Value picked = operand == getLhs()
                       ? SelectOp::create(b, loc, getCondition(), g, zero)
                       : SelectOp::create(b, loc, getCondition(), zero, g);
    // select broadcasts against the condition: bring it to g's shape first.
    if (tensorType(picked) != tensorType(g))
      return emitOpError("has no gradient rule when the condition broadcasts "
                         "beyond the values");
    result.push_back(sumToShape(b, loc, picked, type));
  }
  return result;
}

// A float-to-float cast passes the gradient back in the input's type;
// integers get none.
Gradients CastOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  if (!isa<FloatType>(getInput().getType().getElementType()) ||
      !isa<FloatType>(getType().getElementType()))
    return SmallVector<Value>{Value()};
  return SmallVector<Value>{
      CastOp::create(b, getLoc(), getInput().getType(), gradients[0])};
}

Gradients NegOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{NegOp::create(b, getLoc(), gradients[0])};
}

Gradients ExpOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{
      MulOp::create(b, getLoc(), gradients[0], getResult())};
}

Gradients LogOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{
      DivOp::create(b, getLoc(), gradients[0], getInput())};
}

/// gradient * f'(input) in one fused op.
static Gradients activationGradient(OpBuilder &b, Location loc,
                                    ActivationKind kind, Value input,
                                    Value gradient) {
  return SmallVector<Value>{
      ActivationGradOp::create(b, loc, kind, input, gradient)};
}

Gradients TanhOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return activationGradient(b, getLoc(), ActivationKind::Tanh, getInput(),
                            gradients[0]);
}

Gradients ReluOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return activationGradient(b, getLoc(), ActivationKind::Relu, getInput(),
                            gradients[0]);
}

Gradients SigmoidOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return activationGradient(b, getLoc(), ActivationKind::Sigmoid, getInput(),
                            gradients[0]);
}

Gradients SiluOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return activationGradient(b, getLoc(), ActivationKind::Silu, getInput(),
                            gradients[0]);
}

Gradients GeluOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return activationGradient(b, getLoc(),
                            getApproximation() == GeluApproximation::Tanh
                                ? ActivationKind::GeluTanh
                                : ActivationKind::GeluErf,
                            getInput(), gradients[0]);
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

// With A' and B' the operands as multiplied: dA' = g B'^T and dB' = A'^T g;
// a transposed operand takes the transpose of its gradient, which the
// transpose flags express without a transpose op. (Under contract_batch, g
// has no batch dimensions and broadcasts over them.) An operand without
// batch dimensions that every batch shares (a weight) sums its gradient
// over the batch within the product: contract_batch.
Gradients MatmulOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0], lhs = getLhs(), rhs = getRhs();
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  MatrixGroups groups = getMatrixGroups();
  int64_t rows = groups.rows, contracting = groups.contracting,
          columns = groups.columns;
  ArrayRef<int64_t> resultBatch =
      getType().getShape().drop_back(rows + columns);
  auto sharedByBatch = [&](bool lhsShared) {
    OperandGroups own = lhsShared ? getLhsGroups() : getRhsGroups();
    OperandGroups other = lhsShared ? getRhsGroups() : getLhsGroups();
    Value otherValue = lhsShared ? rhs : lhs;
    return !getContractBatch() && !resultBatch.empty() && own.batchRank == 0 &&
           tensorType(otherValue).getShape().take_front(other.batchRank) ==
               resultBatch;
  };
  bool contractLhs = sharedByBatch(true), contractRhs = sharedByBatch(false);
  auto matmul = [&](Value x, Value y, bool tx, bool ty, bool contract,
                    ArrayRef<int64_t> dims) -> Value {
    return MatmulOp::create(b, getLoc(), x, y, tx, ty, contract, dims);
  };
  // dlhs = g rhs^T and drhs = lhs^T g, each laid out as its operand.
  Value lhsGrad =
      tl ? matmul(rhs, g, tr, true, contractLhs, {contracting, columns, rows})
         : matmul(g, rhs, false, !tr, contractLhs,
                  {rows, columns, contracting});
  Value rhsGrad =
      tr ? matmul(g, lhs, true, tl, contractRhs, {columns, rows, contracting})
         : matmul(lhs, g, !tl, false, contractRhs,
                  {contracting, rows, columns});
  return SmallVector<Value>{sumToShape(b, getLoc(), lhsGrad, tensorType(lhs)),
                            sumToShape(b, getLoc(), rhsGrad, tensorType(rhs))};
}

// The input's gradient is the transposed convolution of g, the weight's the
// correlation of the input with g; each keeps the geometry.
Gradients Conv2dOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value g = gradients[0];
  Value input = Conv2dInputGradOp::create(
      b, getLoc(), getInput().getType(), getWeight(), g, getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  Value weight = Conv2dWeightGradOp::create(
      b, getLoc(), getWeight().getType(), getInput(), g, getStridesAttr(),
      getPaddingAttr(), getDilationsAttr(), getGroupsAttr());
  return SmallVector<Value>{input, weight};
}

Gradients MaxPool2dOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{MaxPool2dGradOp::create(
      b, getLoc(), getInput().getType(), getInput(), gradients[0],
      getKernelAttr(), getStridesAttr(), getPaddingAttr(), getDilationsAttr())};
}

Gradients AvgPool2dOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{AvgPool2dGradOp::create(
      b, getLoc(), getInput().getType(), gradients[0], getCountIncludePadAttr(),
      getKernelAttr(), getStridesAttr(), getPaddingAttr(), getDilationsAttr())};
}

Gradients SoftmaxOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{
      SoftmaxGradOp::create(b, getLoc(), getResult(), gradients[0], getAxis())};
}

Gradients LayerNormOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  auto grad = LayerNormGradOp::create(b, getLoc(), getInput(), getGamma(),
                                      gradients[0], getEpsilon());
  return SmallVector<Value>(grad.getResults());
}

/// Whether `gradient` is the zeros autodiff gives a result the loss does
/// not depend on.
static bool isZeroGradient(Value gradient) {
  auto constant = gradient.getDefiningOp<ConstantOp>();
  auto splat =
      constant ? dyn_cast<SplatElementsAttr>(constant.getValue()) : nullptr;
  return splat && splat.getSplatValue<APFloat>().isZero();
}

// The statistics only update the running ones, which no loss reads in
// training mode.
Gradients BatchNormOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  if (!isZeroGradient(gradients[1]) || !isZeroGradient(gradients[2]))
    return emitOpError("differentiating through the batch statistics "
                       "(results 1 and 2) is not supported");
  auto grad = BatchNormGradOp::create(b, getLoc(), getInput(), getGamma(),
                                      gradients[0], getEpsilon(), getGroups());
  return SmallVector<Value>(grad.getResults());
}

Gradients RmsNormOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  auto grad = RmsNormGradOp::create(b, getLoc(), getInput(), getGamma(),
                                    gradients[0], getEpsilon());
  return SmallVector<Value>(grad.getResults());
}

/// Whether `value` is computed from a parameter argument of its function.
static bool dependsOnParameter(Value value) {
  SmallVector<Value> pending = {value};
  llvm::DenseSet<Value> seen;
  while (!pending.empty()) {
    Value next = pending.pop_back_val();
    if (!seen.insert(next).second)
      continue;
    if (auto argument = dyn_cast<BlockArgument>(next)) {
      auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
      auto role =
          func ? func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                   ParcDialect::kRoleAttrName)
               : StringAttr();
      if (role && role.getValue() == "param")
        return true;
      continue;
    }
    llvm::append_range(pending, next.getDefiningOp()->getOperands());
  }
  return false;
}

Gradients AttentionOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  // A learned additive bias (T5's relative positions, ALiBi's trained
  // slopes) would need the scores' gradient, which the fused op does not
  // produce.
  if (getMask() && dependsOnParameter(getMask()))
    return emitOpError("has a mask computed from parameters; parc does not "
                       "differentiate attention's mask");
  auto grad =
      AttentionGradOp::create(b, getLoc(), getQuery(), getKey(), getValue(),
                              gradients[0], getMask(), getCausal(), getScale());
  SmallVector<Value> operandGradients(grad.getResults());
  if (getMask())
    operandGradients.push_back(Value());
  return operandGradients;
}

Gradients CrossEntropyOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value logits = CrossEntropyGradOp::create(
      b, getLoc(), getLogits(), getLabels(), gradients[0],
      /*normalizer=*/Value(), /*shard=*/Value(),
      getLabels().getType().getNumElements());
  return SmallVector<Value>{logits, Value()};
}

//===----------------------------------------------------------------------===//
// Lookup and layout
//===----------------------------------------------------------------------===//

Gradients EmbeddingOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  Value table = EmbeddingGradOp::create(b, getLoc(), getTable().getType(),
                                        getIds(), gradients[0], getShard());
  SmallVector<Value> result = {table, Value()};
  if (getShard())
    result.push_back(Value());
  return result;
}

Gradients ReshapeOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{
      ReshapeOp::create(b, getLoc(), getInput().getType(), gradients[0])};
}

Gradients TransposeOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [index, dim] : llvm::enumerate(perm))
    inverse[dim] = index;
  return SmallVector<Value>{
      TransposeOp::create(b, getLoc(), gradients[0], inverse)};
}

Gradients BroadcastToOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  if (!isa<FloatType>(getType().getElementType()))
    return SmallVector<Value>{Value()};
  return SmallVector<Value>{
      sumToShape(b, getLoc(), gradients[0], getInput().getType())};
}

/// A reduction's result (or its gradient) with the reduced axes of `input`
/// kept as size 1, so that it broadcasts against the input.
static Value keepReducedAxes(OpBuilder &b, Location loc, Value reduced,
                             RankedTensorType input, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(input.getShape());
  for (int64_t axis : axes)
    kept[axis] = 1;
  return ReshapeOp::create(
      b, loc, RankedTensorType::get(kept, input.getElementType()), reduced);
}

/// The gradient of a reduction, broadcast back over the reduced axes.
static Value spreadOverAxes(OpBuilder &b, Location loc, Value gradient,
                            RankedTensorType input, ArrayRef<int64_t> axes) {
  return BroadcastToOp::create(b, loc, input,
                               keepReducedAxes(b, loc, gradient, input, axes));
}

Gradients ReduceSumOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{spreadOverAxes(b, getLoc(), gradients[0],
                                           getInput().getType(), getAxes())};
}

Gradients ReduceMeanOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= getInput().getType().getDimSize(axis);
  Value spread = spreadOverAxes(b, getLoc(), gradients[0], getInput().getType(),
                                getAxes());
  return SmallVector<Value>{MulOp::create(
      b, getLoc(), spread,
      scalar(b, getLoc(), getType().getElementType(), 1.0 / count))};
}

// d/dx log(sum(exp(x))) = exp(x - result): the softmax over the axes.
Gradients ReduceLogSumExpOp::buildGradients(OpBuilder &b,
                                            ValueRange gradients) {
  Location loc = getLoc();
  RankedTensorType input = getInput().getType();
  Value softmax = ExpOp::create(
      b, loc,
      SubOp::create(b, loc, getInput(),
                    keepReducedAxes(b, loc, getResult(), input, getAxes())));
  return SmallVector<Value>{
      MulOp::create(b, loc, softmax,
                    keepReducedAxes(b, loc, gradients[0], input, getAxes()))};
}

Gradients ReduceMaxOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule yet");
}

Gradients TakeOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule yet");
}

Gradients ConcatOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  SmallVector<Value> result;
  int64_t axis = getAxis(), start = 0;
  RankedTensorType type = getType();
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (Value input : getInputs()) {
    SmallVector<int64_t> offsets(type.getRank(), 0);
    offsets[axis] = start;
    RankedTensorType inputType = tensorType(input);
    result.push_back(SliceOp::create(b, getLoc(), gradients[0], offsets,
                                     inputType.getShape(), strides));
    start += inputType.getDimSize(axis);
  }
  return result;
}

Gradients SliceOp::buildGradients(OpBuilder &b, ValueRange gradients) {
  return SmallVector<Value>{
      SliceGradOp::create(b, getLoc(), getInput().getType(), gradients[0],
                          getOffsets(), getStrides())};
}

Gradients ConstantOp::buildGradients(OpBuilder &, ValueRange) {
  return SmallVector<Value>{};
}

//===----------------------------------------------------------------------===//
// Gradient ops are not differentiated again.
//===----------------------------------------------------------------------===//

Gradients LayerNormGradOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule (second derivatives are not "
                     "supported)");
}
Gradients BatchNormGradOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule (second derivatives are not "
                     "supported)");
}
Gradients RmsNormGradOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule (second derivatives are not "
                     "supported)");
}
Gradients AttentionGradOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule (second derivatives are not "
                     "supported)");
}
Gradients CrossEntropyGradOp::buildGradients(OpBuilder &, ValueRange) {
  return emitOpError("has no gradient rule (second derivatives are not "
                     "supported)");
}
