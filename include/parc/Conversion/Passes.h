//===- Passes.h - lowering of rank programs ---------------------*- C++ -*-===//

#ifndef PARC_CONVERSION_PASSES_H
#define PARC_CONVERSION_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::parc {

#define GEN_PASS_DECL
#include "parc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parc/Conversion/Passes.h.inc"

} // namespace mlir::parc

#endif // PARC_CONVERSION_PASSES_H
