//===- LowerBatchNorm.cpp - batch_norm written out in parc ops ------------===//
//
// batch_norm's `groups` choose whose statistics normalize a sample: its
// group's. Written out, the groups are a leading dimension [G, N/G, C, ...]
// that the statistics keep, so a data-parallel split of the batch into G
// blocks splits that dimension and each rank reduces only its own block
// (PyTorch DDP's per-rank statistics). With one group the batch is reduced
// whole and a split batch's reductions are partial sums that sharding
// settles with an all-reduce (SyncBatchNorm's).
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::parc {
#define GEN_PASS_DEF_LOWERBATCHNORMPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

/// A batch normalization's per-group statistics, [G, 1, C, 1, ...].
struct Statistics {
  Value mean, rstd;
};

/// Builds one batch normalization's statistics (or takes those its forward
/// pass computed) and its per-channel arithmetic over the grouped input.
class GroupedBatch {
public:
  GroupedBatch(OpBuilder &b, Location loc, Value input, int64_t groups,
               double epsilon, std::optional<Statistics> known = {})
      : b(b), loc(loc), type(cast<RankedTensorType>(input.getType())),
        groups(groups) {
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> grouped(shape);
    if (groups > 1) {
      grouped[0] = shape[0] / groups;
      grouped.insert(grouped.begin(), groups);
    }
    groupedType = RankedTensorType::get(grouped, type.getElementType());
    channelDim = groups > 1 ? 2 : 1;
    for (int64_t dim = groups > 1 ? 1 : 0; dim < groupedType.getRank(); ++dim)
      if (dim != channelDim)
        statisticDims.push_back(dim);
    for (int64_t dim = 0; dim < groupedType.getRank(); ++dim)
      if (dim != channelDim)
        allButChannels.push_back(dim);
    count = type.getNumElements() / (groups * shape[1]);

    x = group(input);
    if (known) {
      mean = known->mean;
      centered = SubOp::create(b, loc, x, mean);
      rstd = known->rstd;
      return;
    }
    mean = meanPerGroup(x);
    centered = SubOp::create(b, loc, x, mean);
    variance = meanPerGroup(MulOp::create(b, loc, centered, centered));
    rstd = DivOp::create(
        b, loc, scalar(1.0),
        SqrtOp::create(b, loc,
                       AddOp::create(b, loc, variance, scalar(epsilon))));
  }

  /// [N, C, ...] as [G, N/G, C, ...].
  Value group(Value value) {
    return groups > 1 ? Value(ReshapeOp::create(b, loc, groupedType, value))
                      : value;
  }
  Value ungroup(Value value) {
    return groups > 1 ? Value(ReshapeOp::create(b, loc, type, value)) : value;
  }
  /// A [C] vector as [C, 1, ...], which broadcasts over the grouped input.
  Value perChannel(Value vector) {
    SmallVector<int64_t> shape(groupedType.getRank() - channelDim, 1);
    shape[0] = type.getDimSize(1);
    return ReshapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), vector);
  }
  /// The mean of each group's channel, [G, 1, C, 1, ...]: a sum divided by
  /// the count (exact in f32, unlike its reciprocal), since a sum over a split
  /// batch is a partial sum that one all-reduce of [C] settles (SyncBatchNorm's
  /// statistics), where a reduce_mean would gather the batch.
  Value meanPerGroup(Value value) {
    return DivOp::create(b, loc,
                         ReduceSumOp::create(b, loc, value, statisticDims,
                                             /*keepdims=*/true),
                         scalar(double(count)));
  }
  /// The [C] sums of `value` over everything but the channels.
  Value sumPerChannel(Value value) {
    return ReduceSumOp::create(b, loc, value, allButChannels,
                               /*keepdims=*/false);
  }
  /// The first group's part of per-group statistics [G, 1, C, 1, ...], as
  /// [C]: a sum weighted one for that group and zero for the others, which
  /// a split of the groups leaves a partial sum of.
  Value firstGroup(Value statistic) {
    if (groups == 1)
      return sumPerChannel(statistic);
    if (!firstGroupSelector) {
      SmallVector<int64_t> shape(groupedType.getRank(), 1);
      shape[0] = groups;
      SmallVector<Attribute> weights(
          groups, b.getFloatAttr(type.getElementType(), 0.0));
      weights[0] = b.getFloatAttr(type.getElementType(), 1.0);
      firstGroupSelector = ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(
              RankedTensorType::get(shape, type.getElementType()), weights));
    }
    return sumPerChannel(MulOp::create(b, loc, statistic, firstGroupSelector));
  }
  Value scalar(double value) {
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    return ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(scalarType,
                               b.getFloatAttr(type.getElementType(), value)));
  }

  OpBuilder &b;
  Location loc;
  RankedTensorType type, groupedType;
  int64_t groups, channelDim, count;
  SmallVector<int64_t> statisticDims, allButChannels;
  Value x, mean, centered, variance, rstd;
  /// [G, 1, ...]: one for the first group, zero for the others.
  Value firstGroupSelector;
};

/// The statistics each lowered forward op computed, by its input: its
/// gradient reads them instead of reducing the input twice again (PyTorch
/// saves the mean and inverse deviation likewise).
struct ForwardStatistics {
  int64_t groups;
  APFloat epsilon;
  Block *block;
  Statistics statistics;
};
using StatisticsByInput =
    llvm::DenseMap<Value, SmallVector<ForwardStatistics, 1>>;

void lower(BatchNormOp op, StatisticsByInput &computed) {
  OpBuilder b(op);
  GroupedBatch batch(b, op.getLoc(), op.getInput(), op.getGroups(),
                     op.getEpsilon().convertToDouble());
  Value scale = MulOp::create(b, op.getLoc(), batch.rstd,
                              batch.perChannel(op.getGamma()));
  Value result = AddOp::create(
      b, op.getLoc(), MulOp::create(b, op.getLoc(), batch.centered, scale),
      batch.perChannel(op.getBeta()));
  // The running variance is the unbiased one, as PyTorch's.
  Value unbiased = MulOp::create(
      b, op.getLoc(), batch.firstGroup(batch.variance),
      batch.scalar(double(batch.count) / double(batch.count - 1)));
  op.replaceAllUsesWith(ValueRange{batch.ungroup(result),
                                   batch.firstGroup(batch.mean), unbiased});
  computed[op.getInput()].push_back({int64_t(op.getGroups()),
                                     op.getEpsilon(),
                                     op->getBlock(),
                                     {batch.mean, batch.rstd}});
  op.erase();
}

// dx = gamma rstd (dy - mean(dy) - xhat mean(dy xhat)) per group and
// channel; gamma's gradient sums dy xhat, beta's dy.
void lower(BatchNormGradOp op, const StatisticsByInput &computed) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // A forward op lowered earlier in the block, on the same input.
  std::optional<Statistics> known;
  for (const ForwardStatistics &forward : computed.lookup(op.getInput()))
    if (forward.groups == int64_t(op.getGroups()) &&
        forward.epsilon == op.getEpsilon() && forward.block == op->getBlock())
      known = forward.statistics;
  GroupedBatch batch(b, loc, op.getInput(), op.getGroups(),
                     op.getEpsilon().convertToDouble(), known);
  Value gradient = batch.group(op.getGradient());
  Value xhat = MulOp::create(b, loc, batch.centered, batch.rstd);
  Value gammaGrad = batch.sumPerChannel(MulOp::create(b, loc, gradient, xhat));
  Value betaGrad = batch.sumPerChannel(gradient);
  Value xhatGrad =
      MulOp::create(b, loc, gradient, batch.perChannel(op.getGamma()));
  Value inputGrad = MulOp::create(
      b, loc, batch.rstd,
      SubOp::create(
          b, loc, SubOp::create(b, loc, xhatGrad, batch.meanPerGroup(xhatGrad)),
          MulOp::create(
              b, loc, xhat,
              batch.meanPerGroup(MulOp::create(b, loc, xhatGrad, xhat)))));
  op.replaceAllUsesWith(
      ValueRange{batch.ungroup(inputGrad), gammaGrad, betaGrad});
  op.erase();
}

struct LowerBatchNormPass
    : public parc::impl::LowerBatchNormPassBase<LowerBatchNormPass> {
  void runOnOperation() override {
    // Siblings in program order: a forward op is lowered before its
    // gradient.
    StatisticsByInput computed;
    getOperation().walk([&](Operation *op) {
      if (auto batchNorm = dyn_cast<BatchNormOp>(op))
        lower(batchNorm, computed);
      else if (auto grad = dyn_cast<BatchNormGradOp>(op))
        lower(grad, computed);
    });
  }
};

} // namespace
