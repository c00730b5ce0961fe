//===- LocalPartitionOpInterface.td - smarter local forms --*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_LOCALPARTITIONOPINTERFACE_TD
#define PARC_TRANSFORMS_LOCALPARTITIONOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def LocalPartitionOpInterface : OpInterface<"LocalPartitionOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    The per-rank form of an op, for ops whose local form is not the op
    itself on local shapes: where a local algorithm with its own
    collectives beats gathering the operands (the masked vocab-parallel
    lookup, the vocab-parallel loss; their rules mark such factors
    `needsLocalRewrite`), or where attributes spell global sizes (slice).
    Partitioning asks every op that implements it. Attached to the parc ops
    from lib/Transforms, so the dialect does not depend on the partitioner.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the local computation from `operands` (already laid out as the
        op's rule requires under `factors`) and returns the local results.
        `results` holds the layout the rule implies for each result; the
        method corrects its partial axes where its algorithm completes a
        sum itself.
      }], "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>",
      "buildLocalOp",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$operands,
           "const ::mlir::parc::FactorAxes &":$factors,
           "::mlir::dist::MeshOp":$mesh,
           "::llvm::MutableArrayRef<::mlir::parc::TensorSharding>":$results)>,
    InterfaceMethod<[{
        The all-reduces the local form runs among themselves under
        `factors`, as the bytes of each one's buffer per rank (the planner
        prices them; resharding of the operands and results is priced
        apart). None when the factors that need the rewrite are whole.
      }], "::llvm::SmallVector<int64_t>", "getLocalAllReduceBytes",
      (ins "const ::mlir::parc::FactorAxes &":$factors,
           "::mlir::dist::MeshOp":$mesh),
      /*methodBody=*/[{}], /*defaultImplementation=*/[{ return {}; }]>
  ];
}

#endif // PARC_TRANSFORMS_LOCALPARTITIONOPINTERFACE_TD
