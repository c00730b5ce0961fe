//===- DistBase.td - distribution dialect definition -------*- tablegen -*-===//
//
// The `dist` dialect says how tensors are laid out over a logical device
// mesh and holds the collectives that move data between ranks.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTBASE_TD
#define DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::mlir::dist";
  let summary = "Device meshes, tensor shardings and collectives";
  let description = [{
    `dist.mesh` names a logical mesh of ranks with named axes. A
    `#dist.sharding` lists, per tensor dimension, the mesh axes that split
    it (major to minor) and the axes over which the tensor is a pending sum.
    Collectives operate on the local (per-rank) tensors of a partitioned
    program, each over a list of mesh axes: the ranks that differ only in
    those axes' coordinates form a group, ordered by the linearized
    coordinates of the listed axes (first axis major).
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Argument and result attribute holding a user's sharding.
    static constexpr ::llvm::StringLiteral kShardingAttrName = "dist.sharding";
    /// Argument attribute holding a plan's sharding (lower priority).
    static constexpr ::llvm::StringLiteral kPlanShardingAttrName =
        "dist.plan_sharding";
    /// Marks a dist.constraint that a plan inserted (plan priority).
    static constexpr ::llvm::StringLiteral kFromPlanAttrName = "dist.from_plan";
    /// Marks a plan's dist.constraint on one use of a value: that reader
    /// takes the value so, while its producer keeps the layout it computes
    /// in (the planner's ILP reshards on that edge).
    static constexpr ::llvm::StringLiteral kPlanUseAttrName = "dist.plan_use";
    /// Marks a dist.constraint whose copy serves one reader (ZeRO-3's
    /// gathered parameter) and the collectives partitioning builds for it:
    /// a pipeline repeats them for every micro-batch rather than holding
    /// one copy across all.
    static constexpr ::llvm::StringLiteral kPerUseAttrName = "dist.per_use";

  private:
    void registerAttributes();
  public:
  }];
}

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a reduction combines values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::dist";
}
def Dist_ReductionKindAttr
    : EnumAttr<Dist_Dialect, Dist_ReductionKind, "reduction"> {
  let assemblyFormat = "`` $value";
}

def Dist_ShardingAttr : AttrDef<Dist_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "how a tensor is split over a mesh";
  let description = [{
    `#dist.sharding<@m, [[dp], [], [tp]]>`: dimension 0 is split over `dp`,
    dimension 2 over `tp`, dimension 1 is whole on every rank. Several axes
    on one dimension split it major to minor. `partial [tp]` marks a
    pending sum over `tp`: the full tensor is the sum of the ranks' values.
    An axis appears at most once in a sharding.
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh,
                        "::mlir::ArrayAttr":$dims,
                        "::mlir::ArrayAttr":$partial);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The axes splitting dimension `dim`, major to minor.
    ::llvm::SmallVector<::mlir::StringAttr> getDimAxes(unsigned dim) const;
    ::llvm::SmallVector<::mlir::StringAttr> getPartialAxes() const;
    unsigned getRank() const { return getDims().size(); }
    bool isReplicated() const;
  }];
}

#endif // DIST_IR_DISTBASE_TD
