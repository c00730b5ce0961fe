//===- Passes.h - parc graph passes -----------------------------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_PASSES_H
#define PARC_TRANSFORMS_PASSES_H

#include "dist/IR/DistDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "parc/IR/ParcDialect.h"

namespace mlir::parc {

#define GEN_PASS_DECL
#include "parc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parc/Transforms/Passes.h.inc"

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_PASSES_H
