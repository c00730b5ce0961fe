//===- DistOps.td - mesh, annotations and collectives ------*- tablegen -*-===//

#ifndef DIST_IR_DISTOPS_TD
#define DIST_IR_DISTOPS_TD

include "dist/IR/DistBase.td"
include "dist/IR/DistInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

def Dist_MeshOp : Dist_Op<"mesh", [Symbol]> {
  let summary = "a logical mesh of ranks with named axes";
  let description = [{
    `dist.mesh @m axes = [dp = 2, tp = 4]` has 8 ranks; rank r has
    coordinates (r / 4, r % 4): the last axis is minor.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$axis_sizes);
  let assemblyFormat = [{
    $sym_name `axes` `=` custom<MeshAxes>($axis_names, $axis_sizes) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumRanks();
    /// The size of `axis`, or nullopt for an axis the mesh lacks.
    std::optional<int64_t> getAxisSize(::llvm::StringRef axis);
    /// The product of the sizes of `axes` (all of which must exist).
    int64_t getGroupSize(::llvm::ArrayRef<::mlir::StringAttr> axes);
  }];
}

def Dist_ConstraintOp : Dist_Op<"constraint", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "pins the sharding of a value mid-graph";
  let description = [{
    The result is the input laid out as `sharding`. Propagation treats the
    sharding as a user's annotation; partitioning turns it into whatever
    collective reaches it, and then the op disappears.
  }];
  let arguments = (ins AnyRankedTensor:$input, Dist_ShardingAttr:$sharding);
  let results = (outs AnyRankedTensor:$result);
  // The sharding comes last: a trailing `: type` would be read as its type.
  let assemblyFormat = "$input `:` type($input) `to` $sharding attr-dict";
  let hasVerifier = 1;
}

// Collectives on local tensors; `axes` name the group.
class Dist_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Dist_CommunicationOpInterface>])> {
  let hasVerifier = 1;
}

def Dist_AllReduceOp : Dist_CollectiveOp<"all_reduce",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "combines the group's tensors; every rank gets the result";
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, Dist_ReductionKindAttr:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $reduction $input `on` $mesh $axes attr-dict `:` type($input)
  }];
}

def Dist_AllGatherOp : Dist_CollectiveOp<"all_gather"> {
  let summary = "concatenates the group's tensors along a dimension";
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_ReduceScatterOp : Dist_CollectiveOp<"reduce_scatter"> {
  let summary = "sums the group's tensors; each rank keeps its chunk of a dimension";
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_AllToAllOp : Dist_CollectiveOp<"all_to_all"> {
  let summary = "moves a split from one dimension to another";
  let description = [{
    Rank j of the group sends the j-th chunk of `split_dim` to every rank
    and concatenates what it receives along `concat_dim`: a tensor split on
    `concat_dim` becomes split on `split_dim`.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `split` `=` $split_dim `concat` `=` $concat_dim
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_AllSliceOp : Dist_CollectiveOp<"all_slice"> {
  let summary = "keeps this rank's chunk of a dimension; no communication";
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `dim` `=` $dim attr-dict `:` type($input) `->` type($result)
  }];
}

def Dist_AxisIndexOp : Dist_CollectiveOp<"axis_index"> {
  let summary = "this rank's linearized coordinate over the axes";
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "`on` $mesh $axes attr-dict `:` type($result)";
}

// Point-to-point between the stages of an MPMD program (pipeline stages,
// parameter-server workers and servers). The peer agrees with this rank on
// every mesh axis but `axes`, where its coordinates are `peer` (one per
// axis: a pipeline names its stage axis; a worker names the server axis and
// the server's data-parallel coordinate). Messages from
// one rank to another on one `channel` arrive in the order they were sent.
// A send does not wait for its receive (the runtime buffers it), so a static
// schedule deadlocks only if a receive waits for a send that follows it in
// the sender's program. Both have memory effects, which keeps them in
// program order: the program order is the ordering token.
class Dist_PointToPointOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Dist_CommunicationOpInterface,
                                  ["getGroupAxes"]>])> {
  let hasVerifier = 1;
}

def Dist_SendOp : Dist_PointToPointOp<"send",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "sends a tensor to the rank at another coordinate of one axis";
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, DenseI64ArrayAttr:$peer,
                       I64Attr:$channel);
  let assemblyFormat = [{
    $input `to` $mesh `` custom<PeerCoordinates>($axes, $peer)
    `channel` $channel attr-dict `:` type($input)
  }];
}

def Dist_RecvOp : Dist_PointToPointOp<"recv",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "receives the tensor the rank at another coordinate sent";
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes,
                       DenseI64ArrayAttr:$peer, I64Attr:$channel);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `from` $mesh `` custom<PeerCoordinates>($axes, $peer)
    `channel` $channel attr-dict `:` type($result)
  }];
}

#endif // DIST_IR_DISTOPS_TD
