//===- Evaluator.cpp - the reference evaluator ----------------------------===//

#include "parc/Interp/Evaluator.h"
#include "parc/Interp/EvaluableOpInterface.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::parc::interp;

/// Rounds every value to the nearest float, as a float kernel would store it.
static void roundToFloat(Tensor &tensor) {
  for (double &value : tensor.values)
    value = static_cast<double>(static_cast<float>(value));
}

FailureOr<SmallVector<Tensor>>
mlir::parc::interp::evaluateFunction(func::FuncOp func,
                                     ArrayRef<Tensor> arguments,
                                     Precision precision) {
  if (func.isExternal())
    return func.emitError("cannot evaluate a function without a body");
  Block &body = func.getBody().front();
  if (arguments.size() != body.getNumArguments())
    return func.emitError() << "expected " << body.getNumArguments()
                            << " arguments, got " << arguments.size();

  llvm::DenseMap<Value, Tensor> values;
  for (auto [argument, tensor] : llvm::zip_equal(body.getArguments(),
                                                 arguments)) {
    auto type = cast<ShapedType>(argument.getType());
    if (ArrayRef<int64_t>(tensor.shape) != type.getShape())
      return func.emitError() << "argument #" << argument.getArgNumber()
                              << " is given with a shape that differs from "
                              << type;
    values[argument] = tensor;
    // Arguments are stored as their element type too.
    if (precision == Precision::F32 &&
        isa<FloatType>(getElementTypeOrSelf(argument.getType())))
      roundToFloat(values[argument]);
  }

  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Tensor> results;
      for (Value operand : ret.getOperands())
        results.push_back(values.lookup(operand));
      return results;
    }
    auto evaluable = dyn_cast<EvaluableOpInterface>(op);
    if (!evaluable)
      return op.emitOpError("has no reference kernel");

    SmallVector<const Tensor *> operands;
    for (Value operand : op.getOperands())
      operands.push_back(&values[operand]);
    SmallVector<Tensor> results;
    for (Type type : op.getResultTypes())
      results.emplace_back(cast<ShapedType>(type).getShape());
    if (failed(evaluable.evaluate(operands, results)))
      return failure();
    for (auto [result, tensor] : llvm::zip_equal(op.getResults(), results)) {
      if (precision == Precision::F32 &&
          isa<FloatType>(getElementTypeOrSelf(result.getType())))
        roundToFloat(tensor);
      values[result] = std::move(tensor);
    }
  }
  return func.emitError("function body has no return");
}
