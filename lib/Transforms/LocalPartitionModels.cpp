//===- LocalPartitionModels.cpp - vocab-parallel embedding and loss -------===//
//
// Megatron-LM's local algorithms for a vocabulary split over mesh axes:
//  - embedding: each rank looks up the ids in its block of rows and yields
//    zeros for the others; the results are partial sums over those axes.
//  - cross-entropy and its gradient: max and sum all-reduces over the
//    vocabulary's axes of each rank's log-sum-exp replace any gather of the
//    [.., vocab] logits (a log-sum-exp split over its reduced axes combines
//    the same way).
// A split of the loss's positions leaves a partial sum: each rank scales
// its part of the mean by 1 / (all positions).
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/LocalPartitionOpInterface.h"

#include "parc/IR/ParcOps.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/ShardingAnnotations.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::parc;

#include "parc/Transforms/LocalPartitionOpInterface.cpp.inc"

static ArrayAttr axesAttr(OpBuilder &b, ArrayRef<StringAttr> axes) {
  return b.getArrayAttr(SmallVector<Attribute>(axes.begin(), axes.end()));
}

/// This rank's block along `axes`, as the shard index of parc ops.
static Value shardIndex(OpBuilder &b, Location loc, dist::MeshOp mesh,
                        ArrayRef<StringAttr> axes) {
  return dist::AxisIndexOp::create(
      b, loc, RankedTensorType::get({}, b.getI64Type()),
      FlatSymbolRefAttr::get(mesh.getSymNameAttr()), axesAttr(b, axes));
}

static Value allReduce(OpBuilder &b, Location loc, dist::MeshOp mesh,
                       Value value, ArrayRef<StringAttr> axes,
                       dist::ReductionKind kind) {
  return dist::AllReduceOp::create(
      b, loc, value.getType(), value,
      FlatSymbolRefAttr::get(mesh.getSymNameAttr()), axesAttr(b, axes),
      dist::ReductionKindAttr::get(b.getContext(), kind));
}

/// The mesh axes of the factor that spans dimension `dim` of operand
/// `operand` in `rule`.
static const AxisList &operandFactorAxes(const ShardingRule &rule,
                                         const FactorAxes &factors,
                                         unsigned operand, unsigned dim) {
  return factors[rule.getOperands()[operand][dim].front()];
}

/// The log-sum-exp over the ranks of `axes` of each rank's own log-sum-exp
/// `local`: the largest, m, shifts the others, m + log(sum_r exp(l_r - m)).
static Value combineLogSumExp(OpBuilder &b, Location loc, dist::MeshOp mesh,
                              Value local, ArrayRef<StringAttr> axes) {
  Value max = allReduce(b, loc, mesh, local, axes, dist::ReductionKind::Max);
  Value sum = allReduce(
      b, loc, mesh, ExpOp::create(b, loc, SubOp::create(b, loc, local, max)),
      axes, dist::ReductionKind::Sum);
  return AddOp::create(b, loc, LogOp::create(b, loc, sum), max);
}

/// Whether `add` is combineLogSumExp's result for the rank's log-sum-exp
/// `local` and its all-reduced `max`: log(sum(exp(local - max))) + max.
static bool combinesLogSumExp(AddOp add, Value local, dist::AllReduceOp max) {
  auto log = add.getLhs().getDefiningOp<LogOp>();
  auto sum = log ? log.getInput().getDefiningOp<dist::AllReduceOp>() : nullptr;
  auto exp = sum && sum.getReduction() == dist::ReductionKind::Sum &&
                     sum.getAxesAttr() == max.getAxesAttr()
                 ? sum.getInput().getDefiningOp<ExpOp>()
                 : nullptr;
  auto shifted = exp ? exp.getInput().getDefiningOp<SubOp>() : nullptr;
  return add.getRhs() == max.getResult() && shifted &&
         shifted.getLhs() == local && shifted.getRhs() == max.getResult();
}

/// A normalizer that buildLogNormalizer already made of `logits` over
/// `axes` before the insertion point (the loss's, for its gradient), or
/// null.
static Value findLogNormalizer(OpBuilder &b, Value logits, int64_t classDim,
                               ArrayAttr axes) {
  Block *block = b.getInsertionBlock();
  auto precedes = [&](Operation *op) {
    return op->getBlock() == block &&
           (b.getInsertionPoint() == block->end() ||
            op->isBeforeInBlock(&*b.getInsertionPoint()));
  };
  for (Operation *user : logits.getUsers()) {
    auto local = dyn_cast<ReduceLogSumExpOp>(user);
    if (!local || local.getKeepdims() ||
        local.getAxes() != ArrayRef<int64_t>{classDim} || !precedes(local))
      continue;
    for (Operation *reducer : local->getUsers()) {
      auto max = dyn_cast<dist::AllReduceOp>(reducer);
      if (!max || max.getReduction() != dist::ReductionKind::Max ||
          max.getAxesAttr() != axes)
        continue;
      for (Operation *combiner : max->getUsers()) {
        auto add = dyn_cast<AddOp>(combiner);
        if (add && precedes(add) && combinesLogSumExp(add, local, max))
          return add;
      }
    }
  }
  return nullptr;
}

/// log(sum over every rank's classes of exp(logits)) per position, in the
/// labels' shape: one pass over the rank's block of logits, then
/// all-reduces of one value per position. The loss's gradient reuses the
/// loss's own (the forward's normalizer outlives it by a few values per
/// position rather than be computed again over the logits).
static Value buildLogNormalizer(OpBuilder &b, Location loc, dist::MeshOp mesh,
                                Value logits, ArrayRef<StringAttr> classAxes) {
  int64_t classDim = cast<RankedTensorType>(logits.getType()).getRank() - 1;
  if (Value made =
          findLogNormalizer(b, logits, classDim, axesAttr(b, classAxes)))
    return made;
  Value local = ReduceLogSumExpOp::create(b, loc, logits, {classDim},
                                          /*keepdims=*/false);
  return combineLogSumExp(b, loc, mesh, local, classAxes);
}

SmallVector<Value> mlir::parc::cloneOnLocalShapes(
    OpBuilder &builder, Operation *op, ValueRange operands,
    ArrayRef<TensorSharding> results, dist::MeshOp mesh) {
  Operation *clone = builder.clone(*op);
  clone->setOperands(operands);
  clone->removeAttr(kOpShardingsAttrName);
  for (auto [result, layout] : llvm::zip_equal(clone->getResults(), results))
    result.setType(
        layout.getLocalType(cast<RankedTensorType>(result.getType()), mesh));
  return llvm::to_vector_of<Value>(clone->getResults());
}

/// Whether any factor that needs the op's own local algorithm is split.
static bool splitsRewrittenFactor(const ShardingRule &rule,
                                  const FactorAxes &factors) {
  for (auto [factor, axes] : llvm::enumerate(factors))
    if (!axes.empty() && rule.getFactors()[factor].needsLocalRewrite)
      return true;
  return false;
}

namespace {

/// The models of ops whose rules flag factors for a local rewrite: with
/// those factors whole the op is cloned on local shapes; with one split,
/// the derived model's `buildSplit` builds the local algorithm.
template <typename Derived, typename OpT>
struct RewrittenFactorModel
    : public LocalPartitionOpInterface::ExternalModel<Derived, OpT> {
  FailureOr<SmallVector<Value>>
  buildLocalOp(Operation *op, OpBuilder &b, ValueRange operands,
               const FactorAxes &factors, dist::MeshOp mesh,
               MutableArrayRef<TensorSharding> results) const {
    auto typed = cast<OpT>(op);
    ShardingRule rule = typed.getShardingRule();
    if (!splitsRewrittenFactor(rule, factors))
      return cloneOnLocalShapes(b, op, operands, results, mesh);
    return Derived::buildSplit(typed, rule, b, operands, factors, mesh,
                               results);
  }
};

/// The bytes of the vocab-parallel loss's all-reduces, one value per rank's
/// position each (the normalizer's max and sum, the label's logit), when
/// the classes of `loss`'s logits are split, and none otherwise.
static SmallVector<int64_t> getLossAllReduceBytes(CrossEntropyOp loss,
                                                  const FactorAxes &factors,
                                                  dist::MeshOp mesh) {
  ShardingRule rule = loss.getShardingRule();
  RankedTensorType labels = loss.getLabels().getType();
  if (!splitsRewrittenFactor(rule, factors) ||
      operandFactorAxes(rule, factors, 0, labels.getRank()).empty())
    return {};
  TensorSharding positions = deriveTensorSharding(rule, rule.getOperands()[1],
                                                  factors, /*isResult=*/false);
  int64_t bytes = getTensorBytes(positions.getLocalType(
      labels.clone(loss.getLogits().getType().getElementType()), mesh));
  return SmallVector<int64_t>(3, bytes);
}

/// A slice keeps its offsets and strides (sliced dimensions are whole on
/// every rank); the sizes of split dimensions become local.
struct SliceLocalPartition
    : public LocalPartitionOpInterface::ExternalModel<SliceLocalPartition,
                                                      SliceOp> {
  FailureOr<SmallVector<Value>>
  buildLocalOp(Operation *op, OpBuilder &b, ValueRange operands,
               const FactorAxes &factors, dist::MeshOp mesh,
               MutableArrayRef<TensorSharding> results) const {
    auto slice = cast<SliceOp>(op);
    SmallVector<int64_t> sizes =
        results[0].getLocalShape(slice.getType().getShape(), mesh);
    Value local = SliceOp::create(b, op->getLoc(), operands[0],
                                  slice.getOffsets(), sizes,
                                  slice.getStrides());
    return SmallVector<Value>{local};
  }
};

struct EmbeddingLocalPartition
    : public RewrittenFactorModel<EmbeddingLocalPartition, EmbeddingOp> {
  static FailureOr<SmallVector<Value>>
  buildSplit(EmbeddingOp embedding, const ShardingRule &rule, OpBuilder &b,
             ValueRange operands, const FactorAxes &factors, dist::MeshOp mesh,
             MutableArrayRef<TensorSharding> results) {
    if (embedding.getShard())
      return embedding.emitOpError("is already a vocab-parallel lookup");
    const AxisList &vocabAxes = operandFactorAxes(rule, factors, 0, 0);
    Value shard = shardIndex(b, embedding.getLoc(), mesh, vocabAxes);
    Value local = EmbeddingOp::create(b, embedding.getLoc(), operands[0],
                                      operands[1], shard);
    return SmallVector<Value>{local};
  }
};

/// The scatter-add into a vocabulary split over mesh axes: each rank keeps
/// its block of rows and skips the ids outside it.
struct EmbeddingGradLocalPartition
    : public RewrittenFactorModel<EmbeddingGradLocalPartition,
                                  EmbeddingGradOp> {
  static FailureOr<SmallVector<Value>>
  buildSplit(EmbeddingGradOp grad, const ShardingRule &rule, OpBuilder &b,
             ValueRange operands, const FactorAxes &factors, dist::MeshOp mesh,
             MutableArrayRef<TensorSharding> results) {
    if (grad.getShard())
      return grad.emitOpError("is already a vocab-parallel scatter");
    const AxisList &vocabAxes = factors[rule.getResults()[0][0].front()];
    Value shard = shardIndex(b, grad.getLoc(), mesh, vocabAxes);
    Value local = EmbeddingGradOp::create(
        b, grad.getLoc(), results[0].getLocalType(grad.getType(), mesh),
        operands[0], operands[1], shard);
    return SmallVector<Value>{local};
  }
};

/// A log-sum-exp split over reduced axes: each rank's own, combined over
/// their mesh axes.
struct ReduceLogSumExpLocalPartition
    : public RewrittenFactorModel<ReduceLogSumExpLocalPartition,
                                  ReduceLogSumExpOp> {
  SmallVector<int64_t> getLocalAllReduceBytes(Operation *op,
                                              const FactorAxes &factors,
                                              dist::MeshOp mesh) const {
    auto reduce = cast<ReduceLogSumExpOp>(op);
    ShardingRule rule = reduce.getShardingRule();
    if (reducedAxes(reduce, rule, factors).empty())
      return {};
    TensorSharding result = deriveTensorSharding(rule, rule.getResults()[0],
                                                 factors, /*isResult=*/true);
    int64_t bytes = getTensorBytes(result.getLocalType(reduce.getType(), mesh));
    return {bytes, bytes};
  }
  static FailureOr<SmallVector<Value>>
  buildSplit(ReduceLogSumExpOp reduce, const ShardingRule &rule, OpBuilder &b,
             ValueRange operands, const FactorAxes &factors, dist::MeshOp mesh,
             MutableArrayRef<TensorSharding> results) {
    Location loc = reduce.getLoc();
    Value local = ReduceLogSumExpOp::create(
        b, loc, operands[0], reduce.getAxes(), reduce.getKeepdims());
    return SmallVector<Value>{combineLogSumExp(
        b, loc, mesh, local, reducedAxes(reduce, rule, factors))};
  }
  /// The mesh axes that split the op's reduced dimensions.
  static AxisList reducedAxes(ReduceLogSumExpOp reduce,
                              const ShardingRule &rule,
                              const FactorAxes &factors) {
    AxisList axes;
    for (int64_t dim : reduce.getAxes())
      llvm::append_range(axes, operandFactorAxes(rule, factors, 0, dim));
    return axes;
  }
};

struct CrossEntropyLocalPartition
    : public RewrittenFactorModel<CrossEntropyLocalPartition, CrossEntropyOp> {
  // The normalizer's, then the label's logit.
  SmallVector<int64_t> getLocalAllReduceBytes(Operation *op,
                                              const FactorAxes &factors,
                                              dist::MeshOp mesh) const {
    return getLossAllReduceBytes(cast<CrossEntropyOp>(op), factors, mesh);
  }
  static FailureOr<SmallVector<Value>>
  buildSplit(CrossEntropyOp loss, const ShardingRule &rule, OpBuilder &b,
             ValueRange operands, const FactorAxes &factors, dist::MeshOp mesh,
             MutableArrayRef<TensorSharding> results) {
    Location loc = loss.getLoc();
    RankedTensorType globalLabels = loss.getLabels().getType();
    unsigned classDim = globalLabels.getRank();
    const AxisList &classAxes =
        operandFactorAxes(rule, factors, 0, classDim);
    AxisList positionAxes;
    for (unsigned dim = 0; dim < classDim; ++dim)
      llvm::append_range(positionAxes,
                         operandFactorAxes(rule, factors, 1, dim));

    Value logits = operands[0], labels = operands[1];
    Type elementType = loss.getType().getElementType();
    auto scalar = [&](double value) -> Value {
      auto type = RankedTensorType::get({}, elementType);
      return ConstantOp::create(
          b, loc, DenseElementsAttr::get(type, b.getFloatAttr(elementType,
                                                              value)));
    };
    double positions = globalLabels.getNumElements();

    Value result;
    if (classAxes.empty()) {
      // The local mean covers this rank's positions only.
      Value local = CrossEntropyOp::create(b, loc, logits, labels);
      int64_t localPositions =
          cast<RankedTensorType>(labels.getType()).getNumElements();
      result = MulOp::create(b, loc, local, scalar(localPositions / positions));
    } else {
      // loss(p) = log(sum_c exp(x_pc)) - x_p,label, each term reduced over
      // the class axes.
      Value normalizer = buildLogNormalizer(b, loc, mesh, logits, classAxes);
      Value target = TakeOp::create(b, loc, logits, labels,
                                    shardIndex(b, loc, mesh, classAxes));
      target = allReduce(b, loc, mesh, target, classAxes,
                         dist::ReductionKind::Sum);
      Value perPosition = SubOp::create(b, loc, normalizer, target);
      SmallVector<int64_t> allAxes =
          llvm::to_vector(llvm::seq<int64_t>(0, classDim));
      Value total = ReduceSumOp::create(b, loc, perPosition, allAxes,
                                        /*keepdims=*/false);
      result = MulOp::create(b, loc, total, scalar(1.0 / positions));
    }
    // The class axes are settled here; the position axes stay pending.
    results[0].partial = positionAxes;
    return SmallVector<Value>{result};
  }
};

/// The gradient over a split vocabulary: each rank's softmax of its block
/// divides by the all-reduced normalizer; the one-hot term is the block's.
struct CrossEntropyGradLocalPartition
    : public RewrittenFactorModel<CrossEntropyGradLocalPartition,
                                  CrossEntropyGradOp> {
  // The loss's all-reduced normalizer serves the gradient too
  // (buildLogNormalizer finds it): nothing more is reduced.
  SmallVector<int64_t> getLocalAllReduceBytes(Operation *, const FactorAxes &,
                                              dist::MeshOp) const {
    return {};
  }
  static FailureOr<SmallVector<Value>>
  buildSplit(CrossEntropyGradOp grad, const ShardingRule &rule, OpBuilder &b,
             ValueRange operands, const FactorAxes &factors, dist::MeshOp mesh,
             MutableArrayRef<TensorSharding> results) {
    if (grad.getShard())
      return grad.emitOpError("is already a vocab-parallel gradient");
    Location loc = grad.getLoc();
    unsigned classDim = grad.getLabels().getType().getRank();
    const AxisList &classAxes = operandFactorAxes(rule, factors, 0, classDim);
    Value logits = operands[0], labels = operands[1];
    Value normalizer = buildLogNormalizer(b, loc, mesh, logits, classAxes);
    Value local = CrossEntropyGradOp::create(
        b, loc, logits, labels, operands[2], normalizer,
        shardIndex(b, loc, mesh, classAxes), grad.getCount());
    return SmallVector<Value>{local};
  }
};

} // namespace

void mlir::parc::registerLocalPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, ParcDialect *) {
    SliceOp::attachInterface<SliceLocalPartition>(*context);
    EmbeddingOp::attachInterface<EmbeddingLocalPartition>(*context);
    EmbeddingGradOp::attachInterface<EmbeddingGradLocalPartition>(*context);
    ReduceLogSumExpOp::attachInterface<ReduceLogSumExpLocalPartition>(*context);
    CrossEntropyOp::attachInterface<CrossEntropyLocalPartition>(*context);
    CrossEntropyGradOp::attachInterface<CrossEntropyGradLocalPartition>(
        *context);
    context->loadDialect<dist::DistDialect>();
  });
}
