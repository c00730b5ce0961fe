//===- CollectiveEvaluableOpInterface.td - collectives -----*- tablegen -*-===//

#ifndef PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_TD
#define PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def CollectiveEvaluableOpInterface
    : OpInterface<"CollectiveEvaluableOpInterface"> {
  let cppNamespace = "::mlir::parc::interp";
  let description = [{
    The exact semantics of a dist collective over the ranks of its group,
    for the evaluator's simulation of a partitioned program. Attached to
    the dist ops as external models from lib/Interp.
  }];
  let methods = [
    InterfaceMethod<[{
        Computes the results of every rank in `ranks` (whole groups of the
        op) from the operands of those ranks: `operands[r]` and `results[r]`
        belong to world rank r (entries of other ranks are empty), and
        `results` are pre-shaped from the op's result types.
      }], "::llvm::LogicalResult", "evaluateOnMesh",
      (ins "const ::mlir::parc::interp::MeshLayout &":$mesh,
           "::llvm::ArrayRef<int64_t>":$ranks,
           "::llvm::ArrayRef<::llvm::SmallVector<const ::mlir::parc::interp::Tensor *>>":$operands,
           "::llvm::MutableArrayRef<::llvm::SmallVector<::mlir::parc::interp::Tensor>>":$results)>
  ];
}

#endif // PARC_INTERP_COLLECTIVEEVALUABLEOPINTERFACE_TD
