//===- DistAttrs.h - distribution dialect attributes ------------*- C++ -*-===//

#ifndef DIST_IR_DISTATTRS_H
#define DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dist/IR/DistAttrs.h.inc"

#endif // DIST_IR_DISTATTRS_H
