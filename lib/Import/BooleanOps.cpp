//===- BooleanOps.cpp - ONNX comparisons and logic at run time ------------===//
//
// ONNX `bool` is i32 0/1 in parc. Comparisons and logic over values known
// only at run time (the padding mask that transformers derive from the
// attention_mask input) become ops: Equal, Less, LessOrEqual, Greater and
// GreaterOrEqual parc.compare; Cast to bool `compare ne x, 0`; And, Or, Xor
// and Not parc.select over 0/1 operands. With known inputs they fold at
// import instead (OnnxFolding.cpp).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "parc/IR/ParcOps.h"

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::onnx_import;

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Whether `value` is a constant of 0s and 1s.
static bool isBooleanConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto elements =
      constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  return elements && llvm::all_of(elements.getValues<APInt>(), [](APInt v) {
           return v.isZero() || v.isOne();
         });
}

bool Importer::isBoolean(Value value) {
  if (booleans.contains(value) || isBooleanConstant(value))
    return true;
  // Moving elements keeps them 0/1.
  Operation *op = value.getDefiningOp();
  if (isa_and_nonnull<ReshapeOp, TransposeOp, BroadcastToOp, SliceOp>(op))
    return isBoolean(op->getOperand(0));
  if (isa_and_nonnull<ConcatOp>(op))
    return llvm::all_of(op->getOperands(),
                        [&](Value input) { return isBoolean(input); });
  return false;
}

FailureOr<Value> Importer::toBoolean(Value value, Location loc) {
  if (isBoolean(value))
    return value;
  FailureOr<Value> result =
      create<CompareOp>(loc, ComparisonPredicate::Ne, value,
                        scalarConstant(typeOf(value).getElementType(), 0));
  if (succeeded(result))
    booleans.insert(*result);
  return result;
}

LogicalResult Importer::importComparison(const onnx::NodeProto &node) {
  static const std::pair<StringRef, ComparisonPredicate> kPredicates[] = {
      {"Equal", ComparisonPredicate::Eq},
      {"Less", ComparisonPredicate::Lt},
      {"LessOrEqual", ComparisonPredicate::Le},
      {"Greater", ComparisonPredicate::Gt},
      {"GreaterOrEqual", ComparisonPredicate::Ge}};
  const auto *predicate = llvm::find_if(kPredicates, [&](const auto &entry) {
    return entry.first == node.op_type();
  });
  FailureOr<Value> lhs = operand(node, 0), rhs = operand(node, 1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> result =
      create<CompareOp>(nodeLoc(node), predicate->second, *lhs, *rhs);
  if (failed(result))
    return failure();
  booleans.insert(*result);
  define(node, 0, *result);
  return success();
}

LogicalResult Importer::importLogic(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  Location loc = nodeLoc(node);
  SmallVector<Value, 2> inputs;
  for (int index = 0; index < (op == "Not" ? 1 : 2); ++index) {
    FailureOr<Value> input = operand(node, index);
    if (failed(input))
      return failure();
    FailureOr<Value> boolean = toBoolean(*input, loc);
    if (failed(boolean))
      return failure();
    inputs.push_back(*boolean);
  }
  Type i32 = builder.getI32Type();
  Value zero = scalarConstant(i32, 0), one = scalarConstant(i32, 1);
  auto select = [&](Value condition, Value onTrue,
                    Value onFalse) -> FailureOr<Value> {
    return create<SelectOp>(loc, condition, onTrue, onFalse);
  };
  FailureOr<Value> result;
  if (op == "Not") {
    result = select(inputs[0], zero, one);
  } else if (op == "And") {
    result = select(inputs[0], inputs[1], zero);
  } else if (op == "Or") {
    result = select(inputs[0], one, inputs[1]);
  } else {
    FailureOr<Value> notRhs = select(inputs[1], zero, one);
    if (failed(notRhs))
      return failure();
    result = select(inputs[0], *notRhs, inputs[1]);
  }
  if (failed(result))
    return failure();
  booleans.insert(*result);
  define(node, 0, *result);
  return success();
}
