//===- Passes.td - lowering of rank programs ---------------*- tablegen -*-===//

#ifndef PARC_CONVERSION_PASSES_TD
#define PARC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerToRuntimePass : Pass<"parc-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Turns a memory-planned rank program into libparcrt calls";
  let description = [{
    Replaces the model function (after --parc-plan-memory) by the LLVM
    dialect form of runtime/include/parcrt/parcrt.h: `parc_program_step`
    calls `parcrt_<op>(ctx, tensors, ints, floats)` once per op, each
    argument a constant global (descriptors from the memory plan, attributes
    from RuntimeCallOpInterface); `parc_program_json` describes the program
    (mesh, arena size, arguments and results with their shapes, shardings,
    offsets and initialization) for the runtime's main. A stage with a
    prologue (PipeDream-2BW) also gets `parc_prologue_step` and
    `parc_prologue_json`, lowered from the prologue with its own arena.
  }];
  let options = [
    Option<"functionName", "function", "std::string", /*default=*/"\"\"",
           "The model function (default: @forward, or the only one)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // PARC_CONVERSION_PASSES_TD
