//===- ParcDialect.h - parc graph dialect -----------------------*- C++ -*-===//

#ifndef PARC_IR_PARCDIALECT_H
#define PARC_IR_PARCDIALECT_H

#include "mlir/IR/Dialect.h"

#include "parc/IR/ParcDialect.h.inc"

#endif // PARC_IR_PARCDIALECT_H
