//===- DistDialect.h - distribution dialect ---------------------*- C++ -*-===//

#ifndef DIST_IR_DISTDIALECT_H
#define DIST_IR_DISTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dist/IR/DistDialect.h.inc"

#endif // DIST_IR_DISTDIALECT_H
