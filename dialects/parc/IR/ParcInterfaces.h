//===- ParcInterfaces.h - interfaces of parc ops ----------------*- C++ -*-===//

#ifndef PARC_IR_PARCINTERFACES_H
#define PARC_IR_PARCINTERFACES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

#include "parc/IR/ParcInterfaces.h.inc"

#endif // PARC_IR_PARCINTERFACES_H
