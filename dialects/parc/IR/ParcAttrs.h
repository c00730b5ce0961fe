//===- ParcAttrs.h - parc dialect attributes --------------------*- C++ -*-===//

#ifndef PARC_IR_PARCATTRS_H
#define PARC_IR_PARCATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "parc/IR/ParcEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "parc/IR/ParcAttrs.h.inc"

#endif // PARC_IR_PARCATTRS_H
