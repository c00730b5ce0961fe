//===- ParcInterfaces.h - interfaces of parc ops ----------------*- C++ -*-===//

#ifndef PARC_IR_PARCINTERFACES_H
#define PARC_IR_PARCINTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "parc/IR/ShardingRule.h"

namespace mlir::parc {
/// The rule of pointwise ops: one parallel factor per result dimension;
/// operands broadcast into them as numpy does.
ShardingRule getBroadcastShardingRule(Operation *op);
} // namespace mlir::parc

#include "parc/IR/ParcInterfaces.h.inc"

#endif // PARC_IR_PARCINTERFACES_H
