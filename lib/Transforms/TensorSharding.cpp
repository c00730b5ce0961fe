//===- TensorSharding.cpp - a tensor's layout over a mesh -----------------===//

#include "parc/Transforms/TensorSharding.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::parc;

TensorSharding TensorSharding::replicated(unsigned rank) {
  TensorSharding sharding;
  sharding.dims.resize(rank);
  return sharding;
}

TensorSharding TensorSharding::fromAttr(dist::ShardingAttr attr) {
  TensorSharding sharding;
  for (unsigned dim = 0; dim < attr.getRank(); ++dim)
    sharding.dims.push_back(AxisList(attr.getDimAxes(dim)));
  sharding.partial = AxisList(attr.getPartialAxes());
  return sharding;
}

static ArrayAttr toArrayAttr(Builder &b, ArrayRef<StringAttr> axes) {
  return b.getArrayAttr(SmallVector<Attribute>(axes.begin(), axes.end()));
}

dist::ShardingAttr TensorSharding::toAttr(MLIRContext *context,
                                          FlatSymbolRefAttr mesh) const {
  Builder b(context);
  SmallVector<Attribute> dimAttrs;
  for (const AxisList &axes : dims)
    dimAttrs.push_back(toArrayAttr(b, axes));
  return dist::ShardingAttr::get(context, mesh, b.getArrayAttr(dimAttrs),
                                 toArrayAttr(b, partial));
}

bool TensorSharding::usesAxis(StringAttr axis) const {
  return llvm::is_contained(partial, axis) ||
         llvm::any_of(dims, [&](const AxisList &axes) {
           return llvm::is_contained(axes, axis);
         });
}

bool TensorSharding::dropsSplitFor(const TensorSharding &wanted) const {
  for (auto [axes, wantedAxes] : llvm::zip(dims, wanted.dims))
    for (StringAttr axis : axes)
      if (!llvm::is_contained(wantedAxes, axis))
        return true;
  return false;
}

bool TensorSharding::isReplicated() const {
  return partial.empty() &&
         llvm::all_of(dims, [](const AxisList &axes) { return axes.empty(); });
}

SmallVector<int64_t>
TensorSharding::getLocalShape(ArrayRef<int64_t> globalShape,
                              dist::MeshOp mesh) const {
  SmallVector<int64_t> shape(globalShape);
  for (auto [size, axes] : llvm::zip_equal(shape, dims))
    size /= mesh.getGroupSize(axes);
  return shape;
}

SmallVector<int64_t>
TensorSharding::getGlobalShape(ArrayRef<int64_t> localShape,
                               dist::MeshOp mesh) const {
  SmallVector<int64_t> shape(localShape);
  for (auto [size, axes] : llvm::zip_equal(shape, dims))
    size *= mesh.getGroupSize(axes);
  return shape;
}

RankedTensorType TensorSharding::getLocalType(RankedTensorType globalType,
                                              dist::MeshOp mesh) const {
  return RankedTensorType::get(getLocalShape(globalType.getShape(), mesh),
                               globalType.getElementType());
}

llvm::raw_ostream &mlir::parc::operator<<(llvm::raw_ostream &os,
                                          const TensorSharding &sharding) {
  auto printAxes = [&](ArrayRef<StringAttr> axes) {
    os << "[";
    llvm::interleaveComma(axes, os,
                          [&](StringAttr axis) { os << axis.getValue(); });
    os << "]";
  };
  os << "[";
  llvm::interleaveComma(sharding.dims, os, printAxes);
  os << "]";
  if (!sharding.partial.empty()) {
    os << " partial ";
    printAxes(sharding.partial);
  }
  return os;
}
