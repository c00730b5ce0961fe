//===- EvaluableOpInterface.td - reference kernels ---------*- tablegen -*-===//
//
// The reference evaluator's kernel of an op. Kernels are attached to the
// parc ops as external models from lib/Interp, so the dialect does not
// depend on the evaluator.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_EVALUABLEOPINTERFACE_TD
#define PARC_INTERP_EVALUABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def EvaluableOpInterface : OpInterface<"EvaluableOpInterface"> {
  let cppNamespace = "::mlir::parc::interp";
  let description = [{
    Computes an op's results from its operands in double precision. The
    evaluator shapes `results` from the op's result types before the call;
    the kernel fills their values. A kernel reports data-dependent errors
    (an id outside the table, say) with a diagnostic on the op.
  }];
  let methods = [
    InterfaceMethod<"Computes the results of this op.",
      "::llvm::LogicalResult", "evaluate",
      (ins "::llvm::ArrayRef<const ::mlir::parc::interp::Tensor *>":$operands,
           "::llvm::MutableArrayRef<::mlir::parc::interp::Tensor>":$results)>
  ];
}

#endif // PARC_INTERP_EVALUABLEOPINTERFACE_TD
