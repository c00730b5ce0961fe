//===- Tensor.cpp - tensors of the reference evaluator --------------------===//

#include "parc/Interp/Tensor.h"

#include <cassert>

using namespace mlir::parc::interp;

int64_t mlir::parc::interp::getElementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

Tensor::Tensor(llvm::ArrayRef<int64_t> shape)
    : shape(shape), values(getElementCount(shape), 0.0) {}

Tensor::Tensor(llvm::ArrayRef<int64_t> shape, std::vector<double> values)
    : shape(shape), values(std::move(values)) {
  assert(static_cast<int64_t>(this->values.size()) == getElementCount(shape) &&
         "value count must match the shape");
}

llvm::SmallVector<int64_t>
mlir::parc::interp::getRowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t dim = static_cast<int64_t>(shape.size()) - 2; dim >= 0; --dim)
    strides[dim] = strides[dim + 1] * shape[dim + 1];
  return strides;
}

llvm::SmallVector<int64_t> Tensor::getStrides() const {
  return getRowMajorStrides(shape);
}

static int64_t linearIndex(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<int64_t> index) {
  assert(index.size() == shape.size() && "index rank must match");
  int64_t linear = 0;
  for (auto [size, i] : llvm::zip_equal(shape, index))
    linear = linear * size + i;
  return linear;
}

double &Tensor::at(llvm::ArrayRef<int64_t> index) {
  return values[linearIndex(shape, index)];
}

double Tensor::at(llvm::ArrayRef<int64_t> index) const {
  return values[linearIndex(shape, index)];
}
