//===- ParcOps.h - parc graph ops -------------------------------*- C++ -*-===//

#ifndef PARC_IR_PARCOPS_H
#define PARC_IR_PARCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "parc/IR/ParcAttrs.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcInterfaces.h"

namespace mlir::parc {
template <typename ConcreteType>
class MayWriteOverOperand
    : public OpTrait::TraitBase<ConcreteType, MayWriteOverOperand> {};
template <typename ConcreteType>
class KeepsFullPrecision
    : public OpTrait::TraitBase<ConcreteType, KeepsFullPrecision> {};

/// The elements of one [batch, heads, seq, kv_seq] attention score tensor,
/// for a query [batch, heads, seq, d] and a key [batch, heads, kv_seq, d].
int64_t getAttentionScoreElements(ShapedType query, ShapedType key);
} // namespace mlir::parc

#define GET_OP_CLASSES
#include "parc/IR/ParcOps.h.inc"

#endif // PARC_IR_PARCOPS_H
