//===- CollectiveEvaluableOpInterface.td - collectives -----*- tablegen -*-===//

#ifndef PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_TD
#define PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def CollectiveEvaluableOpInterface
    : OpInterface<"CollectiveEvaluableOpInterface"> {
  let cppNamespace = "::mlir::parc::interp";
  let description = [{
    The exact semantics of a dist op over all ranks at once, for the
    evaluator's simulation of a partitioned program. Attached to the dist
    ops as external models from lib/Interp.
  }];
  let methods = [
    InterfaceMethod<[{
        Computes every rank's results from every rank's operands:
        `operands[r]` and `results[r]` belong to rank r, and `results` are
        pre-shaped from the op's result types.
      }], "::llvm::LogicalResult", "evaluateOnMesh",
      (ins "const ::mlir::parc::interp::MeshLayout &":$mesh,
           "::llvm::ArrayRef<::llvm::SmallVector<const ::mlir::parc::interp::Tensor *>>":$operands,
           "::llvm::MutableArrayRef<::llvm::SmallVector<::mlir::parc::interp::Tensor>>":$results)>
  ];
}

#endif // PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_TD
