//===- ShardingAnnotations.cpp - where shardings live in the IR -----------===//

#include "parc/Transforms/ShardingAnnotations.h"

using namespace mlir;
using namespace mlir::parc;

std::optional<TensorSharding> mlir::parc::getRecordedSharding(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    if (!func)
      return std::nullopt;
    if (auto attr = func.getArgAttrOfType<dist::ShardingAttr>(
            argument.getArgNumber(), dist::DistDialect::kShardingAttrName))
      return TensorSharding::fromAttr(attr);
    return std::nullopt;
  }
  auto result = cast<OpResult>(value);
  if (auto constraint = dyn_cast<dist::ConstraintOp>(result.getOwner()))
    return TensorSharding::fromAttr(constraint.getSharding());
  auto attrs =
      result.getOwner()->getAttrOfType<ArrayAttr>(kOpShardingsAttrName);
  if (!attrs || attrs.size() <= result.getResultNumber())
    return std::nullopt;
  if (auto attr =
          dyn_cast<dist::ShardingAttr>(attrs[result.getResultNumber()]))
    return TensorSharding::fromAttr(attr);
  return std::nullopt;
}

TensorSharding mlir::parc::getResultSharding(func::FuncOp func,
                                             unsigned index) {
  if (auto attr = func.getResultAttrOfType<dist::ShardingAttr>(
          index, dist::DistDialect::kShardingAttrName))
    return TensorSharding::fromAttr(attr);
  // A result named like an argument is that argument's next value (a train
  // step's parameters and optimizer state): it keeps the argument's layout.
  if (auto name = func.getResultAttrOfType<StringAttr>(index, "parc.name"))
    for (BlockArgument argument : func.getArguments())
      if (func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                            "parc.name") == name)
        if (std::optional<TensorSharding> layout =
                getRecordedSharding(argument))
          return *layout;
  return TensorSharding::replicated(
      cast<ShapedType>(func.getResultTypes()[index]).getRank());
}
