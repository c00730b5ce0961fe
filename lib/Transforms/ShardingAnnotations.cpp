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
  return TensorSharding::replicated(
      cast<ShapedType>(func.getResultTypes()[index]).getRank());
}
