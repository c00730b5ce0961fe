//===- CollectiveKernels.cpp - exact collectives over simulated ranks -----===//
//
// Also the one dist op a serial program holds: a sharding constraint, which
// lays a value out and leaves it as it is (the reference evaluates a model
// with its plan applied, for the plan's semantics: batch_norm's groups).
//
//===----------------------------------------------------------------------===//

#include "parc/Interp/CollectiveEvaluableOpInterface.h"
#include "parc/Interp/EvaluableOpInterface.h"

#include "dist/IR/DistOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::parc::interp;

#include "parc/Interp/CollectiveEvaluableOpInterface.cpp.inc"

using RankOperands = ArrayRef<SmallVector<const Tensor *>>;
using RankResults = MutableArrayRef<SmallVector<Tensor>>;

/// Chunk `index` of `count` equal chunks of `tensor` along `dim`.
static Tensor chunk(const Tensor &tensor, int64_t dim, int64_t count,
                    int64_t index) {
  SmallVector<int64_t> shape(tensor.shape);
  shape[dim] /= count;
  Tensor part(shape);
  int64_t offset = index * shape[dim];
  forEachIndex(shape, [&](ArrayRef<int64_t> at, int64_t linear) {
    SmallVector<int64_t> source(at);
    source[dim] += offset;
    part.values[linear] = tensor.at(source);
  });
  return part;
}

/// `parts` joined along `dim` into `result` (already shaped).
static void concat(ArrayRef<Tensor> parts, int64_t dim, Tensor &result) {
  int64_t offset = 0;
  for (const Tensor &part : parts) {
    forEachIndex(part.shape, [&](ArrayRef<int64_t> at, int64_t linear) {
      SmallVector<int64_t> target(at);
      target[dim] += offset;
      result.at(target) = part.values[linear];
    });
    offset += part.shape[dim];
  }
}

/// Combines the group's tensors elementwise (sum or max).
static Tensor combine(const MeshLayout &mesh, RankOperands operands,
                      int64_t rank, ArrayRef<StringRef> axes, bool max) {
  SmallVector<int64_t> group = mesh.getGroup(rank, axes);
  Tensor total = *operands[group.front()][0];
  for (int64_t member : ArrayRef<int64_t>(group).drop_front())
    for (auto [out, in] :
         llvm::zip_equal(total.values, operands[member][0]->values))
      out = max ? std::max(out, in) : out + in;
  return total;
}

namespace {

template <typename Derived, typename OpT>
struct CollectiveModel
    : public CollectiveEvaluableOpInterface::ExternalModel<Derived, OpT> {};

struct AllReduceModel
    : CollectiveModel<AllReduceModel, mlir::dist::AllReduceOp> {
  LogicalResult evaluateOnMesh(Operation *op, const MeshLayout &mesh,
                               ArrayRef<int64_t> ranks, RankOperands operands,
                               RankResults results) const {
    auto allReduce = cast<mlir::dist::AllReduceOp>(op);
    bool max = allReduce.getReduction() == mlir::dist::ReductionKind::Max;
    for (int64_t rank : ranks)
      results[rank][0] = combine(mesh, operands, rank,
                                 axisNames(allReduce.getAxes()), max);
    return success();
  }
};

struct AllGatherModel
    : CollectiveModel<AllGatherModel, mlir::dist::AllGatherOp> {
  LogicalResult evaluateOnMesh(Operation *op, const MeshLayout &mesh,
                               ArrayRef<int64_t> ranks, RankOperands operands,
                               RankResults results) const {
    auto gather = cast<mlir::dist::AllGatherOp>(op);
    for (int64_t rank : ranks) {
      SmallVector<Tensor> parts;
      for (int64_t member : mesh.getGroup(rank, axisNames(gather.getAxes())))
        parts.push_back(*operands[member][0]);
      concat(parts, gather.getDim(), results[rank][0]);
    }
    return success();
  }
};

struct ReduceScatterModel
    : CollectiveModel<ReduceScatterModel, mlir::dist::ReduceScatterOp> {
  LogicalResult evaluateOnMesh(Operation *op, const MeshLayout &mesh,
                               ArrayRef<int64_t> ranks, RankOperands operands,
                               RankResults results) const {
    auto scatter = cast<mlir::dist::ReduceScatterOp>(op);
    SmallVector<StringRef> axes = axisNames(scatter.getAxes());
    for (int64_t rank : ranks)
      results[rank][0] = chunk(
          combine(mesh, operands, rank, axes, /*max=*/false), scatter.getDim(),
          mesh.getGroupSize(rank, axes), mesh.getIndexInGroup(rank, axes));
    return success();
  }
};

struct AllSliceModel : CollectiveModel<AllSliceModel, mlir::dist::AllSliceOp> {
  LogicalResult evaluateOnMesh(Operation *op, const MeshLayout &mesh,
                               ArrayRef<int64_t> ranks, RankOperands operands,
                               RankResults results) const {
    auto slice = cast<mlir::dist::AllSliceOp>(op);
    SmallVector<StringRef> axes = axisNames(slice.getAxes());
    for (int64_t rank : ranks)
      results[rank][0] = chunk(*operands[rank][0], slice.getDim(),
                               mesh.getGroupSize(rank, axes),
                               mesh.getIndexInGroup(rank, axes));
    return success();
  }
};

struct AllToAllModel : CollectiveModel<AllToAllModel, mlir::dist::AllToAllOp> {
  LogicalResult evaluateOnMesh(Operation *op, const MeshLayout &mesh,
                               ArrayRef<int64_t> ranks, RankOperands operands,
                               RankResults results) const {
    auto allToAll = cast<mlir::dist::AllToAllOp>(op);
    SmallVector<StringRef> axes = axisNames(allToAll.getAxes());
    for (int64_t rank : ranks) {
      int64_t count = mesh.getGroupSize(rank, axes);
      // Member q contributes its chunk for this rank, in group order.
      int64_t index = mesh.getIndexInGroup(rank, axes);
      SmallVector<Tensor> parts;
      for (int64_t member : mesh.getGroup(rank, axes))
        parts.push_back(chunk(*operands[member][0], allToAll.getSplitDim(),
                              count, index));
      concat(parts, allToAll.getConcatDim(), results[rank][0]);
    }
    return success();
  }
};

struct AxisIndexModel
    : CollectiveModel<AxisIndexModel, mlir::dist::AxisIndexOp> {
  LogicalResult evaluateOnMesh(Operation *op, const MeshLayout &mesh,
                               ArrayRef<int64_t> ranks, RankOperands,
                               RankResults results) const {
    auto axisIndex = cast<mlir::dist::AxisIndexOp>(op);
    for (int64_t rank : ranks)
      results[rank][0].values[0] =
          mesh.getIndexInGroup(rank, axisNames(axisIndex.getAxes()));
    return success();
  }
};

struct ConstraintModel
    : public EvaluableOpInterface::ExternalModel<ConstraintModel,
                                                 mlir::dist::ConstraintOp> {
  LogicalResult evaluate(Operation *, ArrayRef<const Tensor *> operands,
                         MutableArrayRef<Tensor> results) const {
    results[0] = *operands[0];
    return success();
  }
};

} // namespace

void mlir::parc::interp::registerCollectiveEvaluableOpInterfaceModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, dist::DistDialect *) {
    dist::AllReduceOp::attachInterface<AllReduceModel>(*context);
    dist::AllGatherOp::attachInterface<AllGatherModel>(*context);
    dist::ReduceScatterOp::attachInterface<ReduceScatterModel>(*context);
    dist::AllSliceOp::attachInterface<AllSliceModel>(*context);
    dist::AllToAllOp::attachInterface<AllToAllModel>(*context);
    dist::AxisIndexOp::attachInterface<AxisIndexModel>(*context);
    dist::ConstraintOp::attachInterface<ConstraintModel>(*context);
  });
}
