//===- DistInterfaces.h - interfaces of dist ops ----------------*- C++ -*-===//

#ifndef DIST_IR_DISTINTERFACES_H
#define DIST_IR_DISTINTERFACES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"

#include "dist/IR/DistInterfaces.h.inc"

#endif // DIST_IR_DISTINTERFACES_H
