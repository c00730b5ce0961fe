//===- Resharding.cpp - collectives between two layouts -------------------===//
//
// Each step detects one pattern between the current and the wanted layout
// and records the collective that removes it (the order is in Resharding.h).
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/Resharding.h"
#include "parc/Transforms/MemoryPlan.h"

using namespace mlir;
using namespace mlir::parc;
using dist::CollectiveKind;

namespace {

class ReshardPlanner {
public:
  ReshardPlanner(dist::MeshOp mesh, RankedTensorType globalType,
                 TensorSharding current)
      : mesh(mesh), globalType(globalType), current(std::move(current)) {}

  FailureOr<SmallVector<ReshardStep>> run(const TensorSharding &to,
                                          std::string &whyNot);

private:
  int64_t localBytes() {
    return getTensorBytes(current.getLocalType(globalType, mesh));
  }
  /// Records a step whose collective covers `bufferBytes` and leaves the
  /// tensor laid out as `current`.
  void addStep(CollectiveKind kind, ArrayRef<StringAttr> axes, int64_t dim,
               int64_t bufferBytes, int64_t sourceDim = 0) {
    steps.push_back({kind, AxisList(axes), dim, sourceDim, current,
                     bufferBytes, mesh.getGroupSize(axes)});
  }

  void settlePendingSums(const TensorSharding &to);
  void moveSplits(const TensorSharding &to);
  void gather(const TensorSharding &to);
  void slice(const TensorSharding &to);

  dist::MeshOp mesh;
  RankedTensorType globalType;
  TensorSharding current;
  SmallVector<ReshardStep> steps;
};

/// The axes `to` adds to dimension `dim` after what `current` already has,
/// or none when `current` is not a prefix of it.
ArrayRef<StringAttr> extraAxes(const AxisList &current, const AxisList &to) {
  if (current.size() > to.size() ||
      !llvm::equal(current, ArrayRef<StringAttr>(to).take_front(
                                current.size())))
    return {};
  return ArrayRef<StringAttr>(to).drop_front(current.size());
}

} // namespace

void ReshardPlanner::settlePendingSums(const TensorSharding &to) {
  AxisList pending;
  for (StringAttr axis : current.partial)
    if (!llvm::is_contained(to.partial, axis))
      pending.push_back(axis);
  if (pending.empty())
    return;
  // A pending sum that `to` splits on a dimension is reduce-scattered
  // there: the sum and the split in one collective.
  for (unsigned dim = 0; dim < current.dims.size(); ++dim) {
    AxisList scattered;
    for (StringAttr axis : extraAxes(current.dims[dim], to.dims[dim])) {
      if (!llvm::is_contained(pending, axis))
        break;
      scattered.push_back(axis);
    }
    if (scattered.empty())
      continue;
    int64_t inputBytes = localBytes();
    llvm::append_range(current.dims[dim], scattered);
    for (StringAttr axis : scattered) {
      llvm::erase(pending, axis);
      llvm::erase(current.partial, axis);
    }
    addStep(CollectiveKind::ReduceScatter, scattered, dim, inputBytes);
  }
  if (pending.empty())
    return;
  for (StringAttr axis : pending)
    llvm::erase(current.partial, axis);
  addStep(CollectiveKind::AllReduce, pending, 0, localBytes());
}

void ReshardPlanner::moveSplits(const TensorSharding &to) {
  bool moved = true;
  while (moved) {
    moved = false;
    for (unsigned from = 0; from < current.dims.size() && !moved; ++from) {
      AxisList &source = current.dims[from];
      if (source.empty() || !extraAxes(source, to.dims[from]).empty() ||
          llvm::equal(source, to.dims[from]))
        continue;
      StringAttr axis = source.back();
      for (unsigned target = 0; target < current.dims.size(); ++target) {
        ArrayRef<StringAttr> extra =
            extraAxes(current.dims[target], to.dims[target]);
        if (target == from || extra.empty() || extra.front() != axis)
          continue;
        int64_t inputBytes = localBytes();
        source.pop_back();
        current.dims[target].push_back(axis);
        addStep(CollectiveKind::AllToAll, {axis}, target, inputBytes, from);
        moved = true;
        break;
      }
    }
  }
}

void ReshardPlanner::gather(const TensorSharding &to) {
  for (unsigned dim = 0; dim < current.dims.size(); ++dim) {
    AxisList &axes = current.dims[dim];
    size_t common = 0;
    while (common < axes.size() && common < to.dims[dim].size() &&
           axes[common] == to.dims[dim][common])
      ++common;
    if (common == axes.size())
      continue;
    AxisList gathered(axes.begin() + common, axes.end());
    axes.resize(common);
    addStep(CollectiveKind::AllGather, gathered, dim, localBytes());
  }
}

void ReshardPlanner::slice(const TensorSharding &to) {
  for (unsigned dim = 0; dim < current.dims.size(); ++dim) {
    AxisList extra(extraAxes(current.dims[dim], to.dims[dim]));
    if (extra.empty())
      continue;
    llvm::append_range(current.dims[dim], extra);
    addStep(CollectiveKind::AllSlice, extra, dim, /*bufferBytes=*/0);
  }
}

FailureOr<SmallVector<ReshardStep>>
ReshardPlanner::run(const TensorSharding &to, std::string &whyNot) {
  for (StringAttr axis : to.partial)
    if (!llvm::is_contained(current.partial, axis)) {
      whyNot = "cannot make a value a pending sum over '" +
               axis.getValue().str() + "'";
      return failure();
    }
  settlePendingSums(to);
  moveSplits(to);
  gather(to);
  slice(to);
  return std::move(steps);
}

FailureOr<SmallVector<ReshardStep>>
mlir::parc::planResharding(dist::MeshOp mesh, RankedTensorType globalType,
                           TensorSharding from, const TensorSharding &to,
                           std::string &whyNot) {
  if (from == to)
    return SmallVector<ReshardStep>();
  return ReshardPlanner(mesh, globalType, std::move(from)).run(to, whyNot);
}

FailureOr<Value> mlir::parc::reshard(OpBuilder &b, Location loc,
                                     dist::MeshOp mesh, Value value,
                                     RankedTensorType globalType,
                                     TensorSharding from,
                                     const TensorSharding &to) {
  std::string whyNot;
  FailureOr<SmallVector<ReshardStep>> steps =
      planResharding(mesh, globalType, std::move(from), to, whyNot);
  if (failed(steps))
    return emitError(loc) << whyNot;
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  for (const ReshardStep &step : *steps) {
    ArrayAttr axes = b.getArrayAttr(
        SmallVector<Attribute>(step.axes.begin(), step.axes.end()));
    RankedTensorType type = step.after.getLocalType(globalType, mesh);
    switch (step.kind) {
    case CollectiveKind::ReduceScatter:
      value = dist::ReduceScatterOp::create(b, loc, type, value, meshRef, axes,
                                            b.getI64IntegerAttr(step.dim));
      break;
    case CollectiveKind::AllReduce:
      value = dist::AllReduceOp::create(
          b, loc, type, value, meshRef, axes,
          dist::ReductionKindAttr::get(b.getContext(),
                                       dist::ReductionKind::Sum));
      break;
    case CollectiveKind::AllToAll:
      value = dist::AllToAllOp::create(b, loc, type, value, meshRef, axes,
                                       b.getI64IntegerAttr(step.dim),
                                       b.getI64IntegerAttr(step.sourceDim));
      break;
    case CollectiveKind::AllGather:
      value = dist::AllGatherOp::create(b, loc, type, value, meshRef, axes,
                                        b.getI64IntegerAttr(step.dim));
      break;
    case CollectiveKind::AllSlice:
      value = dist::AllSliceOp::create(b, loc, type, value, meshRef, axes,
                                       b.getI64IntegerAttr(step.dim));
      break;
    }
  }
  return value;
}
