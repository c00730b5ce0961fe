//===- ObjectEmission.h - LLVM dialect to LLVM IR and objects ---*- C++ -*-===//

#ifndef PARC_CONVERSION_OBJECTEMISSION_H
#define PARC_CONVERSION_OBJECTEMISSION_H

#include "mlir/IR/BuiltinOps.h"

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir {
class DialectRegistry;
namespace parc {

/// Registers what translateToLLVMIR needs (builtin and LLVM dialects).
void registerLLVMTranslations(DialectRegistry &registry);

/// The LLVM IR of a module in the LLVM dialect, for the host, or null
/// after a diagnostic.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module,
                                                llvm::LLVMContext &context);

/// Compiles `module` for the host with LLVM's TargetMachine (PIC) into an
/// object file at `path`.
LogicalResult emitObjectFile(llvm::Module &module, StringRef path,
                             std::string &error);

} // namespace parc
} // namespace mlir

#endif // PARC_CONVERSION_OBJECTEMISSION_H
