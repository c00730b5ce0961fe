//===- Evaluator.cpp - the reference evaluator ----------------------------===//

#include "parc/Interp/Evaluator.h"
#include "parc/Interp/CollectiveEvaluableOpInterface.h"
#include "parc/Interp/EvaluableOpInterface.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::parc::interp;

/// Rounds every value to the nearest float, as a float kernel would store it.
static void roundToFloat(Tensor &tensor) {
  for (double &value : tensor.values)
    value = static_cast<double>(static_cast<float>(value));
}

/// Runs `func` on every rank in lock step: local ops per rank, collectives
/// over all ranks at once. Without a mesh there is one rank.
static FailureOr<SmallVector<SmallVector<Tensor>>>
evaluateInLockStep(func::FuncOp func, const MeshLayout *mesh,
                   ArrayRef<SmallVector<Tensor>> rankArguments,
                   Precision precision) {
  if (func.isExternal())
    return func.emitError("cannot evaluate a function without a body");
  Block &body = func.getBody().front();
  size_t ranks = rankArguments.size();
  SmallVector<llvm::DenseMap<Value, Tensor>> values(ranks);
  for (auto [rank, arguments] : llvm::enumerate(rankArguments)) {
    if (arguments.size() != body.getNumArguments())
      return func.emitError() << "expected " << body.getNumArguments()
                              << " arguments, got " << arguments.size();
    for (auto [argument, tensor] :
         llvm::zip_equal(body.getArguments(), arguments)) {
      auto type = cast<ShapedType>(argument.getType());
      if (ArrayRef<int64_t>(tensor.shape) != type.getShape())
        return func.emitError() << "argument #" << argument.getArgNumber()
                                << " is given with a shape that differs from "
                                << type;
      Tensor &stored = values[rank][argument] = tensor;
      // Arguments are stored as their element type too.
      if (precision == Precision::F32 &&
          isa<FloatType>(getElementTypeOrSelf(argument.getType())))
        roundToFloat(stored);
    }
  }

  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<SmallVector<Tensor>> results(ranks);
      for (size_t rank = 0; rank < ranks; ++rank)
        for (Value operand : ret.getOperands())
          results[rank].push_back(values[rank].lookup(operand));
      return results;
    }
    SmallVector<SmallVector<const Tensor *>> operands(ranks);
    SmallVector<SmallVector<Tensor>> results(ranks);
    for (size_t rank = 0; rank < ranks; ++rank) {
      for (Value operand : op.getOperands())
        operands[rank].push_back(&values[rank][operand]);
      for (Type type : op.getResultTypes())
        results[rank].emplace_back(cast<ShapedType>(type).getShape());
    }
    if (auto collective = dyn_cast<CollectiveEvaluableOpInterface>(op)) {
      if (!mesh)
        return op.emitOpError("is a collective; evaluate it on a mesh");
      if (failed(collective.evaluateOnMesh(*mesh, operands, results)))
        return failure();
    } else if (auto evaluable = dyn_cast<EvaluableOpInterface>(op)) {
      for (size_t rank = 0; rank < ranks; ++rank)
        if (failed(evaluable.evaluate(operands[rank], results[rank])))
          return failure();
    } else {
      return op.emitOpError("has no reference kernel");
    }
    for (size_t rank = 0; rank < ranks; ++rank)
      for (auto [result, tensor] :
           llvm::zip_equal(op.getResults(), results[rank])) {
        if (precision == Precision::F32 &&
            isa<FloatType>(getElementTypeOrSelf(result.getType())))
          roundToFloat(tensor);
        values[rank][result] = std::move(tensor);
      }
  }
  return func.emitError("function body has no return");
}

FailureOr<SmallVector<Tensor>>
mlir::parc::interp::evaluateFunction(func::FuncOp func,
                                     ArrayRef<Tensor> arguments,
                                     Precision precision) {
  SmallVector<SmallVector<Tensor>> rankArguments = {
      SmallVector<Tensor>(arguments)};
  FailureOr<SmallVector<SmallVector<Tensor>>> results =
      evaluateInLockStep(func, nullptr, rankArguments, precision);
  if (failed(results))
    return failure();
  return std::move(results->front());
}

FailureOr<SmallVector<SmallVector<Tensor>>>
mlir::parc::interp::evaluateOnMesh(func::FuncOp func, const MeshLayout &mesh,
                                   ArrayRef<SmallVector<Tensor>> rankArguments,
                                   Precision precision) {
  if (static_cast<int64_t>(rankArguments.size()) != mesh.getNumRanks())
    return func.emitError() << "expected arguments for "
                            << mesh.getNumRanks() << " ranks, got "
                            << rankArguments.size();
  return evaluateInLockStep(func, &mesh, rankArguments, precision);
}
