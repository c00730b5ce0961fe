//===- Resharding.cpp - collectives between two layouts -------------------===//
//
// Each step detects one pattern between the current and the wanted layout
// and applies the collective that removes it, in this order:
//
//   partial [a] -> [[a], ..]     reduce_scatter (the sum lands split)
//   partial [a] -> [[], ..]      all_reduce
//   [[a], []] -> [[], [a]]       all_to_all (a split moves between dims)
//   [[a, b]] -> [[a]]            all_gather of the trailing axes
//   [[a]] -> [[a, b]]            all_slice of the extra axes (no traffic)
//
//===----------------------------------------------------------------------===//

#include "Resharding.h"

using namespace mlir;
using namespace mlir::parc;

namespace {

class Resharder {
public:
  Resharder(OpBuilder &b, Location loc, dist::MeshOp mesh, Value value,
            RankedTensorType globalType, TensorSharding current)
      : b(b), loc(loc), mesh(mesh), value(value), globalType(globalType),
        current(std::move(current)) {}

  FailureOr<Value> run(const TensorSharding &to);

private:
  ArrayAttr axesAttr(ArrayRef<StringAttr> axes) {
    return b.getArrayAttr(SmallVector<Attribute>(axes.begin(), axes.end()));
  }
  FlatSymbolRefAttr meshRef() {
    return FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  }
  RankedTensorType localType() {
    return current.getLocalType(globalType, mesh);
  }

  void settlePendingSums(const TensorSharding &to);
  void moveSplits(const TensorSharding &to);
  void gather(const TensorSharding &to);
  void slice(const TensorSharding &to);

  OpBuilder &b;
  Location loc;
  dist::MeshOp mesh;
  Value value;
  RankedTensorType globalType;
  TensorSharding current;
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

void Resharder::settlePendingSums(const TensorSharding &to) {
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
    llvm::append_range(current.dims[dim], scattered);
    for (StringAttr axis : scattered) {
      llvm::erase(pending, axis);
      llvm::erase(current.partial, axis);
    }
    value = dist::ReduceScatterOp::create(b, loc, localType(), value, meshRef(),
                                          axesAttr(scattered),
                                          b.getI64IntegerAttr(dim));
  }
  if (pending.empty())
    return;
  for (StringAttr axis : pending)
    llvm::erase(current.partial, axis);
  value = dist::AllReduceOp::create(
      b, loc, value.getType(), value, meshRef(), axesAttr(pending),
      dist::ReductionKindAttr::get(b.getContext(), dist::ReductionKind::Sum));
}

void Resharder::moveSplits(const TensorSharding &to) {
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
        source.pop_back();
        current.dims[target].push_back(axis);
        value = dist::AllToAllOp::create(
            b, loc, localType(), value, meshRef(), axesAttr({axis}),
            b.getI64IntegerAttr(target), b.getI64IntegerAttr(from));
        moved = true;
        break;
      }
    }
  }
}

void Resharder::gather(const TensorSharding &to) {
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
    value = dist::AllGatherOp::create(b, loc, localType(), value, meshRef(),
                                      axesAttr(gathered),
                                      b.getI64IntegerAttr(dim));
  }
}

void Resharder::slice(const TensorSharding &to) {
  for (unsigned dim = 0; dim < current.dims.size(); ++dim) {
    AxisList extra(extraAxes(current.dims[dim], to.dims[dim]));
    if (extra.empty())
      continue;
    llvm::append_range(current.dims[dim], extra);
    value = dist::AllSliceOp::create(b, loc, localType(), value, meshRef(),
                                     axesAttr(extra), b.getI64IntegerAttr(dim));
  }
}

FailureOr<Value> Resharder::run(const TensorSharding &to) {
  for (StringAttr axis : to.partial)
    if (!llvm::is_contained(current.partial, axis))
      return emitError(loc) << "cannot make a value a pending sum over '"
                            << axis.getValue() << "'";
  settlePendingSums(to);
  moveSplits(to);
  gather(to);
  slice(to);
  return value;
}

FailureOr<Value> mlir::parc::reshard(OpBuilder &builder, Location loc,
                                     dist::MeshOp mesh, Value value,
                                     RankedTensorType globalType,
                                     TensorSharding from,
                                     const TensorSharding &to) {
  if (from == to)
    return value;
  return Resharder(builder, loc, mesh, value, globalType, std::move(from))
      .run(to);
}
