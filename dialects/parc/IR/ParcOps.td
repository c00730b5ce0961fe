//===- ParcOps.td - parc graph ops -------------------------*- tablegen -*-===//
//
// Ops with computed result types check their operands in inferReturnTypes,
// so a malformed graph is reported wherever types are computed: when
// parsed, built or verified. The others (softmax, reshape) use verifiers.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_PARCOPS_TD
#define PARC_IR_PARCOPS_TD

include "parc/IR/ParcBase.td"
include "parc/IR/ParcAttrs.td"
include "parc/IR/ParcInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Parc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Parc_Dialect, mnemonic, !listconcat(traits, [Pure])>;

// An op that computes its result type in C++ (inferReturnTypes) and counts
// its FLOPs in C++.
class Parc_ShapedOp<string mnemonic, list<Trait> traits = []>
    : Parc_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor,
        DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
        DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                                  ["getShardingRule"]>,
        DeclareOpInterfaceMethods<Parc_GradientOpInterface>])>;

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Parc_MatmulOp : Parc_ShapedOp<"matmul"> {
  let summary = "batched matrix product with numpy batch broadcasting";
  let description = [{
    Multiplies the last two dimensions of `lhs` ([..., m, k]) and `rhs`
    ([..., k, n]); leading (batch) dimensions broadcast as in numpy, so a
    [b, s, h] activation times a [h, n] weight gives [b, s, n].
    `transpose_lhs` / `transpose_rhs` swap the last two dimensions of that
    operand first.

    With `contract_batch`, the operands have the same batch dimensions and
    the result sums the products over them: [m, n]. A weight's gradient
    under a batched activation is one such product (one GEMM over batch
    and rows together where the layout allows, no [batch, m, n] partials).

    `matrix_dims = [rows, contracting, columns]` lets m, k and n each span
    several dimensions (one each by default), which the product treats as
    one, row-major: a [b, s, h] activation times a [h, 3, heads, d] weight
    with `matrix_dims [1, 1, 3]` is [b, s, 3, heads, d], one GEMM of
    [b s, h] x [h, 3 heads d] whose heads may still be split over ranks.
    A transpose swaps the operand's two groups.

    ```mlir
    %y = parc.matmul %x, %w transpose_rhs
        : tensor<2x8x16xf32>, tensor<32x16xf32> -> tensor<2x8x32xf32>
    %dw = parc.matmul %x, %dy transpose_lhs contract_batch
        : tensor<2x8x16xf32>, tensor<2x8x32xf32> -> tensor<16x32xf32>
    %qkv = parc.matmul %x, %wqkv matrix_dims [1, 1, 3]
        : tensor<2x8x16xf32>, tensor<16x3x4x4xf32> -> tensor<2x8x3x4x4xf32>
    ```
  }];
  let arguments = (ins Parc_FloatTensor:$lhs, Parc_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs,
                       UnitAttr:$contract_batch,
                       DefaultValuedOptionalAttr<DenseI64ArrayAttr,
                                                 "{1, 1, 1}">:$matrix_dims);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    (`contract_batch` $contract_batch^)? (`matrix_dims` $matrix_dims^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// How many dimensions m, k and n span.
    struct MatrixGroups {
      int64_t rows, contracting, columns;
    };
    MatrixGroups getMatrixGroups() {
      ArrayRef<int64_t> dims = getMatrixDims();
      return {dims[0], dims[1], dims[2]};
    }
    /// Where an operand's dimensions lie: its batch dimensions come first,
    /// then the group `first` (m of lhs, k of rhs) and the group `second`
    /// (k of lhs, n of rhs), in the other order when transposed.
    struct OperandGroups {
      int64_t batchRank, firstStart, secondStart;
    };
    static OperandGroups getOperandGroups(int64_t rank, int64_t first,
                                          int64_t second, bool transposed) {
      int64_t batch = rank - first - second;
      return transposed ? OperandGroups{batch, batch + second, batch}
                        : OperandGroups{batch, batch, batch + first};
    }
    OperandGroups getLhsGroups() {
      MatrixGroups groups = getMatrixGroups();
      return getOperandGroups(getLhs().getType().getRank(), groups.rows,
                              groups.contracting, getTransposeLhs());
    }
    OperandGroups getRhsGroups() {
      MatrixGroups groups = getMatrixGroups();
      return getOperandGroups(getRhs().getType().getRank(),
                              groups.contracting, groups.columns,
                              getTransposeRhs());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// The geometry of a 2-D convolution, shared by the op and its gradients:
// `strides` and `dilations` are [height, width]; `padding` is ONNX's
// [top, left, bottom, right] of zeros around the input; the input's
// channels and the filters split into `groups` equal groups.
defvar Parc_ConvolutionGeometry = (ins DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilations, I64Attr:$groups);

def Parc_Conv2dOp : Parc_ShapedOp<"conv2d"> {
  let summary = "2-D convolution (cross-correlation), NCHW";
  let description = [{
    `input` is [batch, channels, height, width] and `weight` [filters,
    channels / groups, kernel_height, kernel_width] (PyTorch's and ONNX's
    layouts); the result is [batch, filters, out_height, out_width] with
    out = (size + pad_begin + pad_end - dilation (kernel - 1) - 1) / stride
    + 1, rounded down. Filter f of group g = f / (filters / groups) sees
    that group's input channels only. A bias is a separate `parc.add`.

    ```mlir
    %y = parc.conv2d %x, %w strides [1, 1] padding [1, 1, 1, 1]
        dilations [1, 1] groups 1
        : tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = !con((ins Parc_FloatTensor:$input, Parc_FloatTensor:$weight),
                       Parc_ConvolutionGeometry);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `strides` $strides `padding` $padding `dilations`
    $dilations `groups` $groups attr-dict `:` type($input) `,` type($weight)
  }];
}

// The window of a 2-D pooling: `kernel`, `strides` and `dilations` are
// [height, width], `padding` [top, left, bottom, right] as conv2d's.
defvar Parc_PoolingWindow = (ins DenseI64ArrayAttr:$kernel,
    DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
    DenseI64ArrayAttr:$dilations);

class Parc_PoolingOp<string mnemonic, string what, dag extra = (ins)>
    : Parc_ShapedOp<mnemonic> {
  let summary = what # " over 2-D windows, NCHW";
  let arguments = !con((ins Parc_FloatTensor:$input), Parc_PoolingWindow,
                       extra);
  let results = (outs Parc_FloatTensor:$result);
}

def Parc_MaxPool2dOp : Parc_PoolingOp<"max_pool2d", "maximum"> {
  let description = [{
    Each channel's maximum over each window of `input` ([batch, channels,
    height, width]); the result's spatial sizes follow conv2d's rule with
    the kernel as the window. Padding may be at most half the window (as
    PyTorch's), so every window holds an input element; padding never wins.
  }];
  let assemblyFormat = [{
    $input `kernel` $kernel `strides` $strides `padding` $padding `dilations`
    $dilations attr-dict `:` type($input)
  }];
}

def Parc_AvgPool2dOp : Parc_PoolingOp<"avg_pool2d", "mean",
                                      (ins UnitAttr:$count_include_pad)> {
  let description = [{
    Each channel's mean over each window, as max_pool2d's windows. With
    `count_include_pad` the padding's zeros count in the mean (PyTorch's
    default); without it only the input's elements do (ONNX's default).
  }];
  let assemblyFormat = [{
    $input `kernel` $kernel `strides` $strides `padding` $padding `dilations`
    $dilations (`count_include_pad` $count_include_pad^)? attr-dict `:`
    type($input)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Parc_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Parc_Op<mnemonic, !listconcat(traits, [InferTypeOpAdaptor,
                         Parc_MayWriteOverOperand, Parc_FlopCountOpInterface,
                         Parc_ShardingRuleOpInterface,
                         DeclareOpInterfaceMethods<Parc_GradientOpInterface>])> {
  let summary = what # " with numpy broadcasting";
  let arguments = (ins Parc_FloatTensor:$lhs, Parc_FloatTensor:$rhs);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Parc_AddOp : Parc_BinaryOp<"add", "elementwise sum", [Parc_SumsPartialsOpInterface]>;
def Parc_SubOp : Parc_BinaryOp<"sub", "elementwise difference",
                               [Parc_SumsPartialsOpInterface]>;
def Parc_MulOp : Parc_BinaryOp<"mul", "elementwise product">;
def Parc_DivOp : Parc_BinaryOp<"div", "elementwise quotient">;
def Parc_PowOp : Parc_BinaryOp<"pow", "elementwise power lhs ^ rhs">;

class Parc_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Parc_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType,
        InferTypeOpInterface, Parc_MayWriteOverOperand, Parc_FlopCountOpInterface,
        Parc_ShardingRuleOpInterface,
        DeclareOpInterfaceMethods<Parc_GradientOpInterface>])> {
  let summary = what;
  let arguments = (ins Parc_FloatTensor:$input);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Parc_NegOp : Parc_UnaryOp<"neg", "elementwise negation", [Parc_SumsPartialsOpInterface]>;
def Parc_ExpOp : Parc_UnaryOp<"exp", "elementwise exponential">;
def Parc_LogOp : Parc_UnaryOp<"log", "elementwise natural logarithm">;
def Parc_TanhOp : Parc_UnaryOp<"tanh", "elementwise hyperbolic tangent">;
def Parc_ReluOp : Parc_UnaryOp<"relu", "elementwise max(x, 0)">;
def Parc_SigmoidOp : Parc_UnaryOp<"sigmoid", "elementwise 1 / (1 + exp(-x))">;
def Parc_SiluOp : Parc_UnaryOp<"silu", "elementwise x * sigmoid(x)">;
def Parc_SqrtOp : Parc_UnaryOp<"sqrt", "elementwise square root">;
def Parc_ErfOp : Parc_UnaryOp<"erf", "elementwise Gauss error function">;

def Parc_SelectOp : Parc_Op<"select", [InferTypeOpAdaptor,
    Parc_FlopCountOpInterface, Parc_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<Parc_GradientOpInterface>]> {
  let summary = "elementwise condition ? lhs : rhs with numpy broadcasting";
  let description = [{
    `condition` is a numeric tensor: a nonzero element selects `lhs`, zero
    selects `rhs` (ONNX's `Where`; the importer brings ONNX `bool` in as
    `i32` 0/1). The three operands broadcast together as in numpy; `lhs`
    and `rhs` have the same element type, which the result takes.
  }];
  let arguments = (ins Parc_AnyTensor:$condition, Parc_AnyTensor:$lhs,
                       Parc_AnyTensor:$rhs);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` type($condition) `,`
    type($lhs) `,` type($rhs) `->` type($result)
  }];
}

def Parc_CompareOp : Parc_Op<"compare", [InferTypeOpAdaptor,
    Parc_FlopCountOpInterface, Parc_ShardingRuleOpInterface]> {
  let summary = "elementwise comparison to i32 0/1 with numpy broadcasting";
  let description = [{
    1 where `lhs predicate rhs` holds, else 0 (ONNX's Equal, Less,
    LessOrEqual, Greater, GreaterOrEqual; the importer's booleans are i32
    0/1, as parc.select's condition reads them). The operands have the same
    element type; integers compare exactly; NaN compares unequal to
    everything. The result is an integer, so no gradient flows through it.
  }];
  let arguments = (ins Parc_ComparisonPredicateAttr:$predicate,
                       Parc_AnyTensor:$lhs, Parc_AnyTensor:$rhs);
  let results = (outs StaticShapeTensorOf<[I32]>:$result);
  let assemblyFormat = [{
    $predicate $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->`
    type($result)
  }];
}

def Parc_CastOp : Parc_Op<"cast", [Parc_FlopCountOpInterface,
    Parc_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<Parc_SumsPartialsOpInterface, ["sumsPartials"]>,
    DeclareOpInterfaceMethods<Parc_GradientOpInterface>]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Same shape, new element type. Float to integer truncates toward zero;
    to a narrower float rounds to nearest.
  }];
  let arguments = (ins Parc_AnyTensor:$input);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Parc_GeluOp : Parc_UnaryOp<"gelu", "Gaussian error linear unit"> {
  let description = [{
    `erf`: x/2 * (1 + erf(x / sqrt(2))). `tanh` (GPT-2's form):
    x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
  }];
  let arguments = (ins Parc_FloatTensor:$input,
                       Parc_GeluApproximationAttr:$approximation);
  let assemblyFormat = "$approximation $input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Parc_SoftmaxOp : Parc_Op<"softmax", [SameOperandsAndResultType,
    InferTypeOpInterface, DeclareOpInterfaceMethods<Parc_GradientOpInterface>,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>]> {
  let summary = "numerically stable softmax along one axis";
  let description = [{
    exp(x - max) / sum(exp(x - max)) along `axis`; a line whose every
    element is -inf (attention with every key masked) is all zeros, as
    PyTorch's exported `Where(IsNaN(softmax), 0, softmax)` makes it.
  }];
  let arguments = (ins Parc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Parc_LayerNormOp : Parc_ShapedOp<"layer_norm"> {
  let summary = "layer normalization over the last axis";
  let description = [{
    (x - mean) / sqrt(var + epsilon) * gamma + beta, with the biased variance
    over the last axis; `gamma` and `beta` have the shape of that axis.
  }];
  let arguments = (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gamma,
                       Parc_FloatTensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `eps` `=` $epsilon attr-dict `:`
    type($input) `,` type($gamma) `,` type($beta)
  }];
}

def Parc_BatchNormOp : Parc_ShapedOp<"batch_norm",
    [AllTypesMatch<["gamma", "beta"]>]> {
  let summary = "batch normalization in training mode, channels in dim 1";
  let description = [{
    Normalizes each channel of `input` ([N, C, ...]) by its mean and biased
    variance over the batch and the trailing dimensions, then scales by
    `gamma` and shifts by `beta` ([C]). The batch splits into `groups` equal
    groups whose statistics are their own: one group gives the whole
    batch's (SyncBatchNorm's, and the serial model's); as many as there are
    data-parallel ranks gives PyTorch DDP's per-rank statistics. `mean` and
    `variance` are the first group's mean and unbiased variance, which
    update the running statistics (DDP keeps rank 0's buffers).

    `--parc-lower-batch-norm` writes it out in parc ops, with the groups as
    a leading dimension that data parallelism splits without
    communication.
  }];
  let arguments = (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gamma,
                       Parc_FloatTensor:$beta,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Parc_FloatTensor:$result, Parc_FloatTensor:$mean,
                      Parc_FloatTensor:$variance);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `eps` `=` $epsilon (`groups` `=` $groups^)?
    attr-dict `:` type($input) `,` type($gamma)
  }];
}

def Parc_RmsNormOp : Parc_ShapedOp<"rms_norm"> {
  let summary = "root-mean-square normalization over the last axis";
  let description = [{ x / sqrt(mean(x^2) + epsilon) * gamma. }];
  let arguments = (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gamma,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `eps` `=` $epsilon attr-dict `:` type($input) `,` type($gamma)
  }];
}

//===----------------------------------------------------------------------===//
// Lookup, layout and reductions
//===----------------------------------------------------------------------===//

def Parc_EmbeddingOp : Parc_ShapedOp<"embedding"> {
  let summary = "row lookup: table[ids]";
  let description = [{
    `table` is [vocab, dim]; `ids` of any shape S gives a result of shape
    S x [dim]. An id outside [0, vocab) is an error at evaluation time.

    With `shard`, the table is block number `shard` of the rows of a larger
    table, rows [shard * vocab, (shard + 1) * vocab) (vocab-parallel
    lookup): an id outside them yields a row of zeros. Partitioning creates
    this form.
  }];
  let arguments = (ins Parc_FloatTensor:$table, Parc_IntTensor:$ids,
                       Optional<Parc_OffsetScalar>:$shard);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids (`shard` $shard^)? attr-dict `:` type($table) `,`
    type($ids) `->` type($result)
  }];
}

def Parc_TakeOp : Parc_ShapedOp<"take"> {
  let summary = "picks one element of the last dimension per position";
  let description = [{
    `input` is S x [classes] and `indices` has shape S: the result at p is
    input[p, indices[p]]. With `shard`, `input` holds block number `shard`
    of a larger class dimension, classes [shard * classes, (shard + 1) *
    classes), and an index outside it yields 0. An index out of range
    without `shard` is an error at evaluation time.
  }];
  let arguments = (ins Parc_FloatTensor:$input, Parc_IntTensor:$indices,
                       Optional<Parc_OffsetScalar>:$shard);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices (`shard` $shard^)? attr-dict `:`
    type($input) `,` type($indices) `->` type($result)
  }];
}

def Parc_ReshapeOp : Parc_Op<"reshape",
    [Parc_SumsPartialsOpInterface,
     DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
     DeclareOpInterfaceMethods<Parc_GradientOpInterface>,
     DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                               ["getShardingRule"]>]> {
  let summary = "same elements in row-major order, new static shape";
  let arguments = (ins Parc_AnyTensor:$input);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Parc_TransposeOp : Parc_ShapedOp<"transpose", [Parc_SumsPartialsOpInterface]> {
  let summary = "permutes dimensions: result dim i is input dim perm[i]";
  let arguments = (ins Parc_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
}

class Parc_ReduceOp<string mnemonic, string what> : Parc_ShapedOp<mnemonic> {
  let summary = what # " over a set of axes";
  let arguments = (ins Parc_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $input $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Parc_ReduceSumOp : Parc_ReduceOp<"reduce_sum", "sum">;
def Parc_ReduceMeanOp : Parc_ReduceOp<"reduce_mean", "mean">;
def Parc_ReduceMaxOp : Parc_ReduceOp<"reduce_max", "maximum">;
def Parc_ReduceLogSumExpOp
    : Parc_ReduceOp<"reduce_log_sum_exp", "log of the sum of exponentials"> {
  let description = [{
    `log(sum(exp(x)))` over the axes, shifted by their maximum so that no
    exponential overflows: one pass over the input, no temporary of its size.
    Split over a reduced axis, each rank's result combines with the others'
    as `m + log(sum_r exp(l_r - m))`, `m` the largest `l_r`.
  }];
}

def Parc_ConcatOp : Parc_ShapedOp<"concat"> {
  let summary = "joins tensors along one axis";
  let arguments = (ins Variadic<Parc_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs `axis` `=` $axis attr-dict `:` type($inputs) `->` type($result)
  }];
}

def Parc_SliceOp : Parc_ShapedOp<"slice"> {
  let summary = "strided box of a tensor";
  let description = [{
    Result dim i has `sizes[i]` elements, taken from the input at
    `offsets[i] + j * strides[i]`.
  }];
  let arguments = (ins Parc_AnyTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$strides);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets `sizes` $sizes `strides` $strides attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Parc_ConstantOp : Parc_Op<"constant", [ConstantLike,
    AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<Parc_GradientOpInterface>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>]> {
  let summary = "a tensor literal";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Attention and loss
//===----------------------------------------------------------------------===//

def Parc_AttentionOp : Parc_ShapedOp<"attention",
    [DeclareOpInterfaceMethods<Parc_UnfusedTrafficOpInterface>]> {
  let summary = "scaled dot-product attention, heads as a dimension";
  let description = [{
    q is [batch, heads, seq, head_dim], k and v are [batch, kv_heads, kv_seq,
    head_dim] where kv_heads divides heads: query head h reads key/value
    head h / (heads / kv_heads) (grouped-query attention; multi-head when
    they are equal, multi-query when kv_heads is 1). Computes
    softmax(scale * q k^T + mask) v, where the optional additive `mask` is
    [batch or 1, heads or 1, seq or 1, kv_seq] (broadcast over the size-1
    dimensions; -inf hides a key) and `causal` hides key j > query i
    (queries aligned to the end of the key sequence). A query that sees no
    key, or whose every visible score is -inf, outputs zeros (as PyTorch's
    exported `Where(IsNaN(softmax), 0, softmax)` gives).
  }];
  let arguments = (ins Parc_FloatTensor:$query, Parc_FloatTensor:$key,
                       Parc_FloatTensor:$value, Optional<Parc_FloatTensor>:$mask,
                       UnitAttr:$causal, F64Attr:$scale);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)? (`causal` $causal^)? `scale`
    `=` $scale attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($mask)^)?
  }];
}

def Parc_CrossEntropyOp : Parc_ShapedOp<"cross_entropy",
    [Parc_KeepsFullPrecision]> {
  let summary = "mean softmax cross-entropy of logits against integer labels";
  let description = [{
    `logits` is S x [classes], `labels` has shape S with values in
    [0, classes); the result is the scalar mean over S of
    logsumexp(logits) - logits[label].
  }];
  let arguments = (ins Parc_FloatTensor:$logits, Parc_IntTensor:$labels);
  let results = (outs 0DTensorOf<[F32, BF16, F16]>:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($loss)
  }];
}

//===----------------------------------------------------------------------===//
// Gradient ops: fused vector-Jacobian products that autodiff emits where one
// kernel beats a chain of ops.
//===----------------------------------------------------------------------===//

def Parc_BroadcastToOp : Parc_Op<"broadcast_to", [Parc_SumsPartialsOpInterface,
    Parc_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<Parc_GradientOpInterface>,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>]> {
  let summary = "numpy broadcast of a tensor to the result shape";
  let description = [{
    Any element type: ONNX's Expand of a 0/1 mask imports as this too.
  }];
  let arguments = (ins Parc_AnyTensor:$input);
  let results = (outs Parc_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Parc_SliceGradOp : Parc_Op<"slice_grad", [Parc_SumsPartialsOpInterface,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>]> {
  let summary = "places a slice's gradient into zeros of the sliced shape";
  let description = [{
    The inverse placement of parc.slice: the result (the sliced tensor's
    shape) is zero except at `offsets[i] + j * strides[i]`, which hold
    `input`.
  }];
  let arguments = (ins Parc_FloatTensor:$input, DenseI64ArrayAttr:$offsets,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `offsets` $offsets `strides` $strides attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Parc_ActivationGradOp : Parc_Op<"activation_grad", [
    SameOperandsAndResultType, InferTypeOpInterface, Parc_MayWriteOverOperand,
    Parc_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>]> {
  let summary = "gradient * activation'(input), elementwise";
  let arguments = (ins Parc_ActivationKindAttr:$activation,
                       Parc_FloatTensor:$input, Parc_FloatTensor:$gradient);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $activation $input `,` $gradient attr-dict `:` type($input)
  }];
}

def Parc_SoftmaxGradOp : Parc_Op<"softmax_grad", [SameOperandsAndResultType,
    InferTypeOpInterface,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>]> {
  let summary = "y * (g - sum(g * y, axis)) for y = softmax(x)";
  let arguments = (ins Parc_FloatTensor:$output, Parc_FloatTensor:$gradient,
                       I64Attr:$axis);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $output `,` $gradient `axis` `=` $axis attr-dict `:` type($output)
  }];
  let hasVerifier = 1;
}

def Parc_LayerNormGradOp : Parc_ShapedOp<"layer_norm_grad",
    [AllTypesMatch<["input", "gradient"]>]> {
  let summary = "gradients of layer_norm: input, gamma and beta";
  let arguments = (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gamma,
                       Parc_FloatTensor:$gradient,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Parc_FloatTensor:$input_grad,
                      Parc_FloatTensor:$gamma_grad,
                      Parc_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $gradient `eps` `=` $epsilon attr-dict `:`
    type($input) `,` type($gamma)
  }];
}

def Parc_BatchNormGradOp : Parc_ShapedOp<"batch_norm_grad",
    [AllTypesMatch<["input", "gradient"]>]> {
  let summary = "gradients of batch_norm's result: input, gamma and beta";
  let description = [{
    The statistics are recomputed from `input`, group by group as
    batch_norm's `groups` say.
  }];
  let arguments = (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gamma,
                       Parc_FloatTensor:$gradient,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Parc_FloatTensor:$input_grad,
                      Parc_FloatTensor:$gamma_grad,
                      Parc_FloatTensor:$beta_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $gradient `eps` `=` $epsilon (`groups` `=` $groups^)?
    attr-dict `:` type($input) `,` type($gamma)
  }];
}

def Parc_RmsNormGradOp : Parc_ShapedOp<"rms_norm_grad",
    [AllTypesMatch<["input", "gradient"]>]> {
  let summary = "gradients of rms_norm: input and gamma";
  let arguments = (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gamma,
                       Parc_FloatTensor:$gradient,
                       DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon);
  let results = (outs Parc_FloatTensor:$input_grad,
                      Parc_FloatTensor:$gamma_grad);
  let assemblyFormat = [{
    $input `,` $gamma `,` $gradient `eps` `=` $epsilon attr-dict `:`
    type($input) `,` type($gamma)
  }];
}

def Parc_EmbeddingGradOp : Parc_Op<"embedding_grad", [
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>]> {
  let summary = "scatter-add of looked-up rows' gradients into a table";
  let description = [{
    The result ([vocab, dim], its type) is zero except that row ids[p]
    accumulates gradient[p]. With `shard`, the result is block `shard` of a
    larger table and other ids are skipped.
  }];
  let arguments = (ins Parc_IntTensor:$ids, Parc_FloatTensor:$gradient,
                       Optional<Parc_OffsetScalar>:$shard);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $ids `,` $gradient (`shard` $shard^)? attr-dict `:` type($ids) `,`
    type($gradient) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Parc_AttentionGradOp : Parc_ShapedOp<"attention_grad",
    [DeclareOpInterfaceMethods<Parc_UnfusedTrafficOpInterface>]> {
  let summary = "gradients of attention: query, key and value";
  let description = [{
    The gradients of parc.attention with respect to q, k and v (a mask is
    an input, not differentiated); a key/value head's gradient sums over the
    query heads of its group.
  }];
  let arguments = (ins Parc_FloatTensor:$query, Parc_FloatTensor:$key,
                       Parc_FloatTensor:$value, Parc_FloatTensor:$gradient,
                       Optional<Parc_FloatTensor>:$mask, UnitAttr:$causal,
                       F64Attr:$scale);
  let results = (outs Parc_FloatTensor:$query_grad,
                      Parc_FloatTensor:$key_grad,
                      Parc_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $gradient (`mask` $mask^)?
    (`causal` $causal^)? `scale` `=` $scale attr-dict `:` type($query) `,`
    type($key) `,` type($value) `,` type($gradient) (`,` type($mask)^)?
  }];
}

def Parc_CrossEntropyGradOp : Parc_ShapedOp<"cross_entropy_grad",
    [AttrSizedOperandSegments, Parc_MayWriteOverOperand]> {
  let summary = "gradient of the mean loss with respect to the logits";
  let description = [{
    (softmax(logits) - onehot(labels)) * gradient / count, where `gradient`
    is the scalar gradient of the loss and `count` the number of positions
    the loss averages over (kept global when the positions are split).

    With `normalizer` and `shard` (Megatron's vocab-parallel loss), `logits`
    holds block number `shard` of a larger class dimension and `normalizer`
    (labels' shape) the log of each position's softmax denominator over all
    classes: the softmax is exp(logits - normalizer), and a label outside
    the block has no one-hot term here.
  }];
  let arguments = (ins Parc_FloatTensor:$logits, Parc_IntTensor:$labels,
                       Parc_FloatTensor:$gradient,
                       Optional<Parc_FloatTensor>:$normalizer,
                       Optional<Parc_OffsetScalar>:$shard, I64Attr:$count);
  let results = (outs Parc_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $gradient (`normalizer` $normalizer^)?
    (`shard` $shard^)? `count` `=` $count attr-dict `:` type($logits) `,`
    type($labels) `,` type($gradient) (`,` type($normalizer)^)?
  }];
}

// The gradients of conv2d: their result's shape (the input's or the
// weight's) is given, as the convolution's shapes do not determine it.
class Parc_ConvolutionGradOp<string mnemonic, string what>
    : Parc_Op<mnemonic, [
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>]> {
  let summary = "gradient of conv2d with respect to its " # what;
  let results = (outs Parc_FloatTensor:$result);
  let hasVerifier = 1;
}

def Parc_Conv2dInputGradOp
    : Parc_ConvolutionGradOp<"conv2d_input_grad", "input"> {
  let description = [{
    The transposed convolution of `gradient` ([batch, filters, out_height,
    out_width]) with the convolution's weight: the result has the input's
    shape.
  }];
  let arguments = !con((ins Parc_FloatTensor:$weight,
                            Parc_FloatTensor:$gradient),
                       Parc_ConvolutionGeometry);
  let assemblyFormat = [{
    $weight `,` $gradient `strides` $strides `padding` $padding `dilations`
    $dilations `groups` $groups attr-dict `:` type($weight) `,`
    type($gradient) `->` type($result)
  }];
}

def Parc_Conv2dWeightGradOp
    : Parc_ConvolutionGradOp<"conv2d_weight_grad", "weight"> {
  let description = [{
    The correlation of the convolution's input with `gradient`, summed over
    the batch: the result has the weight's shape.
  }];
  let arguments = !con((ins Parc_FloatTensor:$input,
                            Parc_FloatTensor:$gradient),
                       Parc_ConvolutionGeometry);
  let assemblyFormat = [{
    $input `,` $gradient `strides` $strides `padding` $padding `dilations`
    $dilations `groups` $groups attr-dict `:` type($input) `,`
    type($gradient) `->` type($result)
  }];
}

// The gradients of the poolings: the result has the pooled input's shape.
class Parc_PoolingGradOp<string mnemonic, string what, dag operands,
                         list<Trait> traits = []>
    : Parc_Op<mnemonic, !listconcat(traits, [
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>,
    DeclareOpInterfaceMethods<Parc_ShardingRuleOpInterface,
                              ["getShardingRule"]>])> {
  let summary = "gradient of " # what # " with respect to its input";
  let arguments = !con(operands, Parc_PoolingWindow);
  let results = (outs Parc_FloatTensor:$result);
  let hasVerifier = 1;
}

def Parc_MaxPool2dGradOp : Parc_PoolingGradOp<"max_pool2d_grad", "max_pool2d",
    (ins Parc_FloatTensor:$input, Parc_FloatTensor:$gradient),
    [AllTypesMatch<["input", "result"]>]> {
  let description = [{
    Each window's gradient goes to the input element that max_pool2d chose
    there: the first maximum in the window's row-major order (PyTorch's
    choice), recomputed from `input`.
  }];
  let assemblyFormat = [{
    $input `,` $gradient `kernel` $kernel `strides` $strides `padding`
    $padding `dilations` $dilations attr-dict `:` type($input) `,`
    type($gradient)
  }];
}

def Parc_AvgPool2dGradOp : Parc_PoolingGradOp<"avg_pool2d_grad", "avg_pool2d",
    (ins Parc_FloatTensor:$gradient, UnitAttr:$count_include_pad)> {
  let description = [{
    Each window's gradient, divided as avg_pool2d divided its sum, spread
    over the window's input elements.
  }];
  let assemblyFormat = [{
    $gradient `kernel` $kernel `strides` $strides `padding` $padding
    `dilations` $dilations (`count_include_pad` $count_include_pad^)?
    attr-dict `:` type($gradient) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def Parc_AdamWUpdateOp : Parc_Op<"adamw_update", [
    AllTypesMatch<["param", "grad", "first_moment", "second_moment",
                   "new_param", "new_first_moment", "new_second_moment"]>,
    Parc_MayWriteOverOperand,
    DeclareOpInterfaceMethods<Parc_OptimizerUpdateOpInterface,
                              ["getParameterState"]>,
    Parc_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>]> {
  let summary = "one AdamW step: bias-corrected moments, decoupled decay";
  let description = [{
    With t = `step` (1 for the first update):
      m' = beta1 m + (1 - beta1) g,   v' = beta2 v + (1 - beta2) g^2,
      p' = p - lr (m' / (1 - beta1^t) / (sqrt(v' / (1 - beta2^t)) + eps)
                   + weight_decay p).
    With `skip` nonzero (NaN included), the results are the operands:
    a step whose gradients overflowed (PyTorch's fused Adam `found_inf`).
  }];
  let arguments = (ins Parc_FloatTensor:$param, Parc_FloatTensor:$grad,
                       Parc_FloatTensor:$first_moment,
                       Parc_FloatTensor:$second_moment,
                       Parc_ScalarF32:$step, Optional<Parc_ScalarF32>:$skip,
                       F64Attr:$lr, F64Attr:$beta1, F64Attr:$beta2,
                       F64Attr:$epsilon, F64Attr:$weight_decay);
  let results = (outs Parc_FloatTensor:$new_param,
                      Parc_FloatTensor:$new_first_moment,
                      Parc_FloatTensor:$new_second_moment);
  let assemblyFormat = [{
    $param `,` $grad `,` $first_moment `,` $second_moment `,` $step
    (`skip` $skip^)? attr-dict `:` type($param)
  }];
}

def Parc_SgdUpdateOp : Parc_Op<"sgd_update", [
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>,
    Parc_MayWriteOverOperand,
    DeclareOpInterfaceMethods<Parc_OptimizerUpdateOpInterface,
                              ["getParameterState"]>,
    Parc_ShardingRuleOpInterface,
    DeclareOpInterfaceMethods<Parc_FlopCountOpInterface, ["getFlopCount"]>]> {
  let summary = "one SGD step with momentum";
  let description = [{
    b' = momentum b + g,  p' = p - lr b' (momentum 0 is plain SGD).
    With `skip` nonzero (NaN included), the results are the operands.
  }];
  let arguments = (ins Parc_FloatTensor:$param, Parc_FloatTensor:$grad,
                       Parc_FloatTensor:$momentum_buffer,
                       Optional<Parc_ScalarF32>:$skip, F64Attr:$lr,
                       F64Attr:$momentum);
  let results = (outs Parc_FloatTensor:$new_param,
                      Parc_FloatTensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer (`skip` $skip^)? attr-dict `:`
    type($param)
  }];
}

def Parc_ClipCoefficientOp : Parc_Op<"clip_coefficient", [
    SameOperandsAndResultType, InferTypeOpInterface,
    Parc_ShardingRuleOpInterface, Parc_FlopCountOpInterface]> {
  let summary = "min(1, max_norm / (sqrt(sum of squares) + 1e-6))";
  let description = [{
    The factor that scales gradients whose global norm exceeds `max_norm`
    down to it, from the sum of their squares.
  }];
  let arguments = (ins Parc_ScalarF32:$sum_of_squares, F64Attr:$max_norm);
  let results = (outs Parc_ScalarF32:$result);
  let assemblyFormat = "$sum_of_squares attr-dict `:` type($sum_of_squares)";
}

#endif // PARC_IR_PARCOPS_TD
