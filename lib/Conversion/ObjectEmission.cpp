//===- ObjectEmission.cpp - LLVM dialect to LLVM IR and objects -----------===//

#include "parc/Conversion/ObjectEmission.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

void mlir::parc::registerLLVMTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

std::unique_ptr<llvm::Module>
mlir::parc::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "parc_program");
  if (!llvmModule)
    module.emitError("cannot translate the program to LLVM IR");
  else
    llvmModule->setTargetTriple(llvm::Triple(llvm::sys::getDefaultTargetTriple()));
  return llvmModule;
}

LogicalResult mlir::parc::emitObjectFile(llvm::Module &module, StringRef path,
                                         std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  const llvm::Triple &triple = module.getTargetTriple();
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_));
  if (!machine) {
    error = "no target machine for " + triple.str();
    return failure();
  }
  module.setDataLayout(machine->createDataLayout());
  std::error_code code;
  llvm::raw_fd_ostream out(path, code, llvm::sys::fs::OF_None);
  if (code) {
    error = "cannot write " + path.str() + ": " + code.message();
    return failure();
  }
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, out, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  passes.run(module);
  out.flush();
  return success();
}
