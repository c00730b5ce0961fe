//===- ShardingRules.cpp - the sharding rule of each parc op --------------===//
//
// Pointwise ops use the interface's default (getBroadcastShardingRule); the
// ops below have their own rule. See ShardingRule.h for the vocabulary.
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ParcOps.h"

using namespace mlir;
using namespace mlir::parc;

/// One factor of `kind` per dimension of `shape`.
static TensorFactors addFactorPerDim(ShardingRule &rule,
                                     ArrayRef<int64_t> shape, FactorKind kind) {
  TensorFactors dims;
  for (int64_t size : shape)
    dims.push_back({rule.addFactor(size, kind)});
  return dims;
}

/// The rule of a matmul once its result's batch dimensions have theirs:
/// one factor per dimension of m, n (parallel) and k (summed), which each
/// operand holds after its batch dimensions in its groups' order.
static ShardingRule matrixRule(MatmulOp op, ShardingRule rule,
                               TensorFactors lhsBatch, TensorFactors rhsBatch,
                               TensorFactors resultBatch) {
  ArrayRef<int64_t> lhs = op.getLhs().getType().getShape(),
                    result = op.getType().getShape();
  MatmulOp::MatrixGroups groups = op.getMatrixGroups();
  int64_t resultBatchRank = result.size() - groups.rows - groups.columns;
  TensorFactors m = addFactorPerDim(
      rule, result.slice(resultBatchRank, groups.rows), FactorKind::Parallel);
  TensorFactors n = addFactorPerDim(rule, result.take_back(groups.columns),
                                    FactorKind::Parallel);
  TensorFactors k = addFactorPerDim(
      rule, lhs.slice(op.getLhsGroups().secondStart, groups.contracting),
      FactorKind::Reduction);
  auto operand = [](TensorFactors dims, const TensorFactors &first,
                    const TensorFactors &second, bool transposed) {
    llvm::append_range(dims, transposed ? second : first);
    llvm::append_range(dims, transposed ? first : second);
    return dims;
  };
  rule.addOperand(operand(std::move(lhsBatch), m, k, op.getTransposeLhs()));
  rule.addOperand(operand(std::move(rhsBatch), k, n, op.getTransposeRhs()));
  rule.addResult(operand(std::move(resultBatch), m, n, false));
  return rule;
}

ShardingRule MatmulOp::getShardingRule() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape(),
                    rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> lhsBatch = lhs.take_front(getLhsGroups().batchRank),
                    rhsBatch = rhs.take_front(getRhsGroups().batchRank);
  // Summed over like k: a split batch leaves partial sums (the
  // data-parallel all-reduce of a weight's gradient).
  if (getContractBatch()) {
    ShardingRule rule;
    TensorFactors batch =
        addFactorPerDim(rule, lhsBatch, FactorKind::Reduction);
    return matrixRule(*this, std::move(rule), batch, batch, {});
  }
  // Batch dimensions broadcast like a pointwise op's.
  MatrixGroups groups = getMatrixGroups();
  ArrayRef<int64_t> batch =
      getType().getShape().drop_back(groups.rows + groups.columns);
  ShardingRuleBuilder builder(batch);
  builder.addBroadcastTensor(lhsBatch, /*isResult=*/false);
  builder.addBroadcastTensor(rhsBatch, /*isResult=*/false);
  builder.addBroadcastTensor(batch, /*isResult=*/true);
  ShardingRule broadcast = builder.build();
  ShardingRule rule;
  for (const Factor &factor : broadcast.getFactors())
    rule.addFactor(factor.size, factor.kind, factor.needsLocalRewrite);
  return matrixRule(*this, std::move(rule), broadcast.getOperands()[0],
                    broadcast.getOperands()[1], broadcast.getResults()[0]);
}

/// The rule of a convolution pass that computes tensor `result` of (input,
/// weight, output) from the other two, its operands in that order. Batch
/// and filters are parallel, input channels summed, except that the
/// dimension the result lacks is the one summed (the filters for the
/// input's gradient, the batch for the weight's). The spatial dimensions
/// stay whole (a split would need halos); so do a grouped convolution's
/// channels and filters, whose split must follow the groups.
static ShardingRule convolutionRule(ArrayRef<int64_t> input,
                                    ArrayRef<int64_t> weight,
                                    ArrayRef<int64_t> output, int64_t groups,
                                    unsigned result) {
  auto kind = [&](unsigned absentFrom, FactorKind present) {
    return result == absentFrom ? FactorKind::Reduction : present;
  };
  FactorKind channels =
      groups == 1 ? kind(2, FactorKind::Parallel) : FactorKind::Replicated;
  FactorKind filters =
      groups == 1 ? kind(0, FactorKind::Parallel) : FactorKind::Replicated;
  ShardingRule rule;
  int64_t n = rule.addFactor(input[0], kind(1, FactorKind::Parallel));
  int64_t o = rule.addFactor(weight[0], filters);
  int64_t c = rule.addFactor(input[1], channels);
  int64_t groupChannels =
      groups == 1 ? c : rule.addFactor(weight[1], FactorKind::Replicated);
  auto whole = [&](ArrayRef<int64_t> shape) {
    return addFactorPerDim(rule, shape.drop_front(2), FactorKind::Replicated);
  };
  TensorFactors tensors[3] = {{{n}, {c}}, {{o}, {groupChannels}}, {{n}, {o}}};
  llvm::append_range(tensors[0], whole(input));
  llvm::append_range(tensors[1], whole(weight));
  llvm::append_range(tensors[2], whole(output));
  for (unsigned tensor = 0; tensor < 3; ++tensor)
    if (tensor != result)
      rule.addOperand(tensors[tensor]);
  rule.addResult(tensors[result]);
  return rule;
}

ShardingRule Conv2dOp::getShardingRule() {
  return convolutionRule(getInput().getType().getShape(),
                         getWeight().getType().getShape(), getType().getShape(),
                         getGroups(), /*result=*/2);
}

ShardingRule Conv2dInputGradOp::getShardingRule() {
  return convolutionRule(getType().getShape(), getWeight().getType().getShape(),
                         getGradient().getType().getShape(), getGroups(),
                         /*result=*/0);
}

ShardingRule Conv2dWeightGradOp::getShardingRule() {
  return convolutionRule(getInput().getType().getShape(), getType().getShape(),
                         getGradient().getType().getShape(), getGroups(),
                         /*result=*/1);
}

/// Batch and channels parallel over a pooling's input and output; the
/// windows stay whole. The operands and the result are the input's shape
/// where `operandIsInput` and `resultIsInput` say so, else the output's.
static ShardingRule poolingRule(ArrayRef<int64_t> input,
                                ArrayRef<int64_t> output,
                                ArrayRef<bool> operandIsInput,
                                bool resultIsInput) {
  ShardingRule rule;
  int64_t n = rule.addFactor(input[0], FactorKind::Parallel);
  int64_t c = rule.addFactor(input[1], FactorKind::Parallel);
  TensorFactors in = {{n}, {c}}, out = {{n}, {c}};
  llvm::append_range(
      in, addFactorPerDim(rule, input.drop_front(2), FactorKind::Replicated));
  llvm::append_range(
      out, addFactorPerDim(rule, output.drop_front(2), FactorKind::Replicated));
  for (bool isInput : operandIsInput)
    rule.addOperand(isInput ? in : out);
  rule.addResult(resultIsInput ? in : out);
  return rule;
}

ShardingRule MaxPool2dOp::getShardingRule() {
  return poolingRule(getInput().getType().getShape(), getType().getShape(),
                     {true}, false);
}

ShardingRule AvgPool2dOp::getShardingRule() {
  return poolingRule(getInput().getType().getShape(), getType().getShape(),
                     {true}, false);
}

ShardingRule MaxPool2dGradOp::getShardingRule() {
  return poolingRule(getType().getShape(), getGradient().getType().getShape(),
                     {true, false}, true);
}

ShardingRule AvgPool2dGradOp::getShardingRule() {
  return poolingRule(getType().getShape(), getGradient().getType().getShape(),
                     {false}, true);
}

ShardingRule SoftmaxOp::getShardingRule() {
  ShardingRuleBuilder builder(getType().getShape());
  builder.addBroadcastTensor(getType().getShape(), /*isResult=*/false)
      .addBroadcastTensor(getType().getShape(), /*isResult=*/true)
      .setKind(getAxis(), FactorKind::Replicated);
  return builder.build();
}

/// Normalization over the last axis: it stays whole; the per-feature
/// parameters span it.
static ShardingRule normalizationRule(ArrayRef<int64_t> shape,
                                      unsigned numParameters) {
  int64_t last = shape.size() - 1;
  ShardingRuleBuilder builder(shape);
  builder.setKind(last, FactorKind::Replicated);
  builder.addBroadcastTensor(shape, /*isResult=*/false);
  for (unsigned i = 0; i < numParameters; ++i)
    builder.addBroadcastTensor(shape.take_back(), /*isResult=*/false);
  builder.addBroadcastTensor(shape, /*isResult=*/true);
  return builder.build();
}

ShardingRule LayerNormOp::getShardingRule() {
  return normalizationRule(getType().getShape(), /*numParameters=*/2);
}

ShardingRule RmsNormOp::getShardingRule() {
  return normalizationRule(getType().getShape(), /*numParameters=*/1);
}

// The batch is summed over for the per-channel results (the first group's
// statistics, gamma's and beta's gradients): split, they are partial sums
// over its axes. The fused op has no local form (the split must follow the
// groups); --parc-lower-batch-norm writes it out before partitioning. The
// statistics need the trailing dimensions whole.
static ShardingRule batchNormRule(ArrayRef<int64_t> shape,
                                  unsigned numChannelOperands) {
  ShardingRule rule;
  TensorFactors full;
  full.push_back({rule.addFactor(shape[0], FactorKind::Reduction,
                                 /*needsLocalRewrite=*/true)});
  int64_t channels = rule.addFactor(shape[1], FactorKind::Parallel);
  full.push_back({channels});
  for (int64_t size : shape.drop_front(2))
    full.push_back({rule.addFactor(size, FactorKind::Replicated)});
  rule.addOperand(full);
  for (unsigned i = 0; i < numChannelOperands; ++i)
    rule.addOperand({{channels}});
  rule.addResult(full);
  rule.addResult({{channels}});
  rule.addResult({{channels}});
  return rule;
}

ShardingRule BatchNormOp::getShardingRule() {
  return batchNormRule(getInput().getType().getShape(), 2);
}

// Vocab-parallel lookup (Megatron-LM): each rank holds a slice of the rows,
// looks up the ids that fall in it and yields zeros for the others, so the
// results are partial sums over the vocabulary's axes.
ShardingRule EmbeddingOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> tableShape = getTable().getType().getShape();
  TensorFactors ids = addFactorPerDim(rule, getIds().getType().getShape(),
                                      FactorKind::Parallel);
  int64_t vocab = rule.addFactor(tableShape[0], FactorKind::Reduction,
                                 /*needsLocalRewrite=*/true);
  int64_t features = rule.addFactor(tableShape[1], FactorKind::Parallel);
  rule.addOperand({{vocab}, {features}});
  rule.addOperand(ids);
  if (getShard())
    rule.addOperand({});
  TensorFactors result = ids;
  result.push_back({features});
  rule.addResult(result);
  return rule;
}

/// Splits a reshape into groups of dimensions with equal products. A group
/// with one dimension on either side becomes compound factors; a group with
/// several on both sides (a [6, 4] -> [4, 6] shuffle) must stay whole.
ShardingRule ReshapeOp::getShardingRule() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  ShardingRule rule;
  TensorFactors inDims(in.size()), outDims(out.size());
  if (llvm::is_contained(in, 0) || llvm::is_contained(out, 0)) {
    rule.addOperand(addFactorPerDim(rule, in, FactorKind::Replicated));
    rule.addResult(addFactorPerDim(rule, out, FactorKind::Replicated));
    return rule;
  }
  size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    // Size-1 dimensions span no factor.
    if (i < in.size() && in[i] == 1) {
      ++i;
      continue;
    }
    if (j < out.size() && out[j] == 1) {
      ++j;
      continue;
    }
    SmallVector<size_t> inGroup = {i}, outGroup = {j};
    int64_t inProduct = in[i], outProduct = out[j];
    while (inProduct != outProduct) {
      if (inProduct < outProduct) {
        inProduct *= in[++i];
        inGroup.push_back(i);
      } else {
        outProduct *= out[++j];
        outGroup.push_back(j);
      }
    }
    ++i;
    ++j;
    auto compound = [&](size_t wholeDim, ArrayRef<int64_t> wholeShape,
                        TensorFactors &wholeDims, ArrayRef<size_t> parts,
                        ArrayRef<int64_t> partShape, TensorFactors &partDims) {
      (void)wholeShape;
      for (size_t part : parts) {
        if (partShape[part] == 1)
          continue;
        int64_t factor = rule.addFactor(partShape[part], FactorKind::Parallel);
        partDims[part].push_back(factor);
        wholeDims[wholeDim].push_back(factor);
      }
    };
    if (inGroup.size() == 1)
      compound(inGroup[0], in, inDims, outGroup, out, outDims);
    else if (outGroup.size() == 1)
      compound(outGroup[0], out, outDims, inGroup, in, inDims);
    else {
      for (size_t dim : inGroup)
        inDims[dim].push_back(rule.addFactor(in[dim], FactorKind::Replicated));
      for (size_t dim : outGroup)
        outDims[dim].push_back(
            rule.addFactor(out[dim], FactorKind::Replicated));
    }
  }
  rule.addOperand(inDims);
  rule.addResult(outDims);
  return rule;
}

ShardingRule TransposeOp::getShardingRule() {
  ShardingRule rule;
  TensorFactors in = addFactorPerDim(rule, getInput().getType().getShape(),
                                     FactorKind::Parallel);
  TensorFactors out;
  for (int64_t dim : getPermutation())
    out.push_back(in[dim]);
  rule.addOperand(in);
  rule.addResult(out);
  return rule;
}

/// Reduced dimensions become factors of `kind` (that need the op's local
/// rewrite where `needsLocalRewrite`); kept size-1 dimensions span no
/// factor.
static ShardingRule reductionRule(ArrayRef<int64_t> shape,
                                  ArrayRef<int64_t> axes, bool keepdims,
                                  FactorKind kind,
                                  bool needsLocalRewrite = false) {
  ShardingRule rule;
  TensorFactors in, out;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    bool reduced = llvm::is_contained(axes, static_cast<int64_t>(dim));
    int64_t factor = reduced ? rule.addFactor(size, kind, needsLocalRewrite)
                             : rule.addFactor(size, FactorKind::Parallel);
    in.push_back({factor});
    if (!reduced)
      out.push_back({factor});
    else if (keepdims)
      out.emplace_back();
  }
  rule.addOperand(in);
  rule.addResult(out);
  return rule;
}

ShardingRule ReduceSumOp::getShardingRule() {
  return reductionRule(getInput().getType().getShape(), getAxes(),
                       getKeepdims(), FactorKind::Reduction);
}

ShardingRule ReduceMaxOp::getShardingRule() {
  return reductionRule(getInput().getType().getShape(), getAxes(),
                       getKeepdims(), FactorKind::Replicated);
}

// Split over a reduced axis, each rank's log-sum-exp combines with the
// others' through the op's local rewrite (a max and a sum all-reduce), and
// every rank holds the whole result.
ShardingRule ReduceLogSumExpOp::getShardingRule() {
  return reductionRule(getInput().getType().getShape(), getAxes(),
                       getKeepdims(), FactorKind::Parallel,
                       /*needsLocalRewrite=*/true);
}

// A partial mean would need rescaling by shard sizes; keep the axes whole.
ShardingRule ReduceMeanOp::getShardingRule() {
  return reductionRule(getInput().getType().getShape(), getAxes(),
                       getKeepdims(), FactorKind::Replicated);
}

// Positions split freely; the picked-from dimension stays whole.
ShardingRule TakeOp::getShardingRule() {
  ShardingRule rule;
  TensorFactors positions = addFactorPerDim(
      rule, getIndices().getType().getShape(), FactorKind::Parallel);
  TensorFactors input = positions;
  input.push_back({rule.addFactor(getInput().getType().getShape().back(),
                                  FactorKind::Replicated)});
  rule.addOperand(input);
  rule.addOperand(positions);
  if (getShard())
    rule.addOperand({});
  rule.addResult(positions);
  return rule;
}

ShardingRule ConcatOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t axis = getAxis();
  TensorFactors shared;
  for (auto [dim, size] : llvm::enumerate(shape))
    shared.push_back(
        static_cast<int64_t>(dim) == axis
            ? DimFactors()
            : DimFactors{rule.addFactor(size, FactorKind::Parallel)});
  // The joined axis is a different index space in every tensor.
  auto withAxis = [&](int64_t size) {
    TensorFactors dims = shared;
    dims[axis] = {rule.addFactor(size, FactorKind::Replicated)};
    return dims;
  };
  for (Value input : getInputs())
    rule.addOperand(
        withAxis(cast<RankedTensorType>(input.getType()).getDimSize(axis)));
  rule.addResult(withAxis(shape[axis]));
  return rule;
}

ShardingRule SliceOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> in = getInput().getType().getShape();
  TensorFactors inDims, outDims;
  for (auto [dim, size] : llvm::enumerate(in)) {
    bool whole = getOffsets()[dim] == 0 && getSizes()[dim] == size &&
                 getStrides()[dim] == 1;
    if (whole) {
      int64_t factor = rule.addFactor(size, FactorKind::Parallel);
      inDims.push_back({factor});
      outDims.push_back({factor});
      continue;
    }
    inDims.push_back({rule.addFactor(size, FactorKind::Replicated)});
    outDims.push_back(
        {rule.addFactor(getSizes()[dim], FactorKind::Replicated)});
  }
  rule.addOperand(inDims);
  rule.addResult(outDims);
  return rule;
}

// A constant is materialized whole on every rank; users slice it.
ShardingRule ConstantOp::getShardingRule() {
  ShardingRule rule;
  rule.addResult(
      addFactorPerDim(rule, getType().getShape(), FactorKind::Replicated));
  return rule;
}

/// The tensors of attention (query, key, value, output and mask): batch and
/// heads split freely; a query's keys and features stay whole. Query heads
/// are [kv_heads, group] (major to minor), so sharding them shards the
/// key/value heads with them (grouped-query attention).
struct AttentionFactors {
  TensorFactors query, key, value, output, mask;
};

static AttentionFactors
addAttentionFactors(ShardingRule &rule, ArrayRef<int64_t> q,
                    ArrayRef<int64_t> k, ArrayRef<int64_t> v, Value maskValue) {
  int64_t batch = rule.addFactor(q[0], FactorKind::Parallel);
  int64_t kvHeads = rule.addFactor(k[1], FactorKind::Parallel);
  DimFactors heads = {kvHeads};
  if (k[1] != 0 && q[1] / k[1] > 1)
    heads.push_back(rule.addFactor(q[1] / k[1], FactorKind::Parallel));
  int64_t queries = rule.addFactor(q[2], FactorKind::Replicated);
  int64_t keys = rule.addFactor(k[2], FactorKind::Replicated);
  int64_t features = rule.addFactor(q[3], FactorKind::Replicated);
  int64_t valueFeatures = rule.addFactor(v[3], FactorKind::Replicated);
  AttentionFactors t = {{{batch}, heads, {queries}, {features}},
                        {{batch}, {kvHeads}, {keys}, {features}},
                        {{batch}, {kvHeads}, {keys}, {valueFeatures}},
                        {{batch}, heads, {queries}, {valueFeatures}},
                        {}};
  if (maskValue) {
    // Broadcast dimensions (size 1 where the scores' is not) span nothing.
    ArrayRef<int64_t> mask =
        cast<RankedTensorType>(maskValue.getType()).getShape();
    SmallVector<int64_t> scores = {q[0], q[1], q[2], k[2]};
    SmallVector<DimFactors> scoreFactors = {{batch}, heads, {queries}, {keys}};
    for (int64_t dim = 0; dim < 4; ++dim)
      t.mask.push_back(mask[dim] == scores[dim] ? scoreFactors[dim]
                                                : DimFactors());
  }
  return t;
}

ShardingRule AttentionOp::getShardingRule() {
  ShardingRule rule;
  AttentionFactors t = addAttentionFactors(
      rule, getQuery().getType().getShape(), getKey().getType().getShape(),
      getValue().getType().getShape(), getMask());
  rule.addOperand(t.query);
  rule.addOperand(t.key);
  rule.addOperand(t.value);
  if (getMask())
    rule.addOperand(t.mask);
  rule.addResult(t.output);
  return rule;
}

// The loss is a mean over the label positions: sharding them leaves partial
// sums once each rank scales its mean by its share. Sharding the classes
// is Megatron's vocab-parallel loss: max and sum all-reduces, no gather of
// the logits. Both need the op's local rewrite.
ShardingRule CrossEntropyOp::getShardingRule() {
  ShardingRule rule;
  TensorFactors positions;
  for (int64_t size : getLabels().getType().getShape())
    positions.push_back({rule.addFactor(size, FactorKind::Reduction,
                                        /*needsLocalRewrite=*/true)});
  int64_t classes = rule.addFactor(getLogits().getType().getShape().back(),
                                   FactorKind::Reduction,
                                   /*needsLocalRewrite=*/true);
  TensorFactors logits = positions;
  logits.push_back({classes});
  rule.addOperand(logits);
  rule.addOperand(positions);
  rule.addResult({});
  return rule;
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

// The mirror of SliceOp's rule: dimensions the slice kept whole split freely.
ShardingRule SliceGradOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  TensorFactors inDims, outDims;
  for (auto [dim, size] : llvm::enumerate(out)) {
    bool whole =
        getOffsets()[dim] == 0 && getStrides()[dim] == 1 && in[dim] == size;
    if (whole) {
      int64_t factor = rule.addFactor(size, FactorKind::Parallel);
      inDims.push_back({factor});
      outDims.push_back({factor});
      continue;
    }
    inDims.push_back({rule.addFactor(in[dim], FactorKind::Replicated)});
    outDims.push_back({rule.addFactor(size, FactorKind::Replicated)});
  }
  rule.addOperand(inDims);
  rule.addResult(outDims);
  return rule;
}

ShardingRule SoftmaxGradOp::getShardingRule() {
  ShardingRuleBuilder builder(getType().getShape());
  builder.addBroadcastTensor(getType().getShape(), /*isResult=*/false)
      .addBroadcastTensor(getType().getShape(), /*isResult=*/false)
      .addBroadcastTensor(getType().getShape(), /*isResult=*/true)
      .setKind(getAxis(), FactorKind::Replicated);
  return builder.build();
}

/// Normalization gradients: rows split freely for the input's gradient and
/// leave the per-feature gradients partial sums over the rows' axes.
static ShardingRule normalizationGradRule(ArrayRef<int64_t> shape,
                                          unsigned numFeatureResults) {
  ShardingRule rule;
  TensorFactors full;
  for (int64_t size : shape.drop_back())
    full.push_back({rule.addFactor(size, FactorKind::Reduction)});
  int64_t features = rule.addFactor(shape.back(), FactorKind::Replicated);
  full.push_back({features});
  rule.addOperand(full);
  rule.addOperand({{features}});
  rule.addOperand(full);
  rule.addResult(full);
  for (unsigned i = 0; i < numFeatureResults; ++i)
    rule.addResult({{features}});
  return rule;
}

ShardingRule LayerNormGradOp::getShardingRule() {
  return normalizationGradRule(getInput().getType().getShape(), 2);
}

ShardingRule RmsNormGradOp::getShardingRule() {
  return normalizationGradRule(getInput().getType().getShape(), 1);
}

ShardingRule BatchNormGradOp::getShardingRule() {
  ShardingRule rule = batchNormRule(getInput().getType().getShape(), 1);
  // The gradient is laid out as the input.
  rule.addOperand(rule.getOperands().front());
  return rule;
}

// Positions are summed over; a vocabulary split keeps each rank's block of
// rows (the local form skips ids outside it).
ShardingRule EmbeddingGradOp::getShardingRule() {
  ShardingRule rule;
  TensorFactors ids = addFactorPerDim(rule, getIds().getType().getShape(),
                                      FactorKind::Reduction);
  int64_t vocab = rule.addFactor(getType().getDimSize(0), FactorKind::Parallel,
                                 /*needsLocalRewrite=*/true);
  int64_t features =
      rule.addFactor(getType().getDimSize(1), FactorKind::Parallel);
  TensorFactors gradient = ids;
  gradient.push_back({features});
  rule.addOperand(ids);
  rule.addOperand(gradient);
  if (getShard())
    rule.addOperand({});
  rule.addResult({{vocab}, {features}});
  return rule;
}

ShardingRule AttentionGradOp::getShardingRule() {
  ShardingRule rule;
  AttentionFactors t = addAttentionFactors(
      rule, getQuery().getType().getShape(), getKey().getType().getShape(),
      getValue().getType().getShape(), getMask());
  rule.addOperand(t.query);
  rule.addOperand(t.key);
  rule.addOperand(t.value);
  rule.addOperand(t.output);
  if (getMask())
    rule.addOperand(t.mask);
  rule.addResult(t.query);
  rule.addResult(t.key);
  rule.addResult(t.value);
  return rule;
}

// Positions split freely (the op divides by the global count). Splitting
// the classes is the backward of Megatron's vocab-parallel loss: the local
// rewrite all-reduces the softmax's normalizer, and no logits are gathered.
ShardingRule CrossEntropyGradOp::getShardingRule() {
  ShardingRule rule;
  TensorFactors positions = addFactorPerDim(
      rule, getLabels().getType().getShape(), FactorKind::Parallel);
  TensorFactors logits = positions;
  logits.push_back({rule.addFactor(getLogits().getType().getShape().back(),
                                   FactorKind::Parallel,
                                   /*needsLocalRewrite=*/true)});
  rule.addOperand(logits);
  rule.addOperand(positions);
  rule.addOperand({});
  if (getNormalizer()) {
    rule.addOperand(positions);
    rule.addOperand({});
  }
  rule.addResult(logits);
  return rule;
}
