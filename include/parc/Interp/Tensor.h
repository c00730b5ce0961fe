//===- Tensor.h - tensors of the reference evaluator ------------*- C++ -*-===//
//
// The reference evaluator favours obvious correctness over speed: every
// tensor is a dense row-major array of doubles, whatever the element type in
// the IR. Integers up to 2^53 are exact in a double.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_TENSOR_H
#define PARC_INTERP_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <vector>

namespace mlir::parc::interp {

struct Tensor {
  Tensor() = default;
  /// A zero-filled tensor of `shape`.
  explicit Tensor(llvm::ArrayRef<int64_t> shape);
  Tensor(llvm::ArrayRef<int64_t> shape, std::vector<double> values);

  int64_t getNumElements() const { return values.size(); }
  int64_t getRank() const { return shape.size(); }

  /// Row-major strides in elements: the last dimension has stride 1.
  llvm::SmallVector<int64_t> getStrides() const;

  double &at(llvm::ArrayRef<int64_t> index);
  double at(llvm::ArrayRef<int64_t> index) const;

  llvm::SmallVector<int64_t> shape;
  std::vector<double> values;
};

/// The number of elements of `shape`.
int64_t getElementCount(llvm::ArrayRef<int64_t> shape);

/// Row-major strides of `shape`.
llvm::SmallVector<int64_t> getRowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// Calls `body(index, linear)` for every multi-index of `shape` in row-major
/// order.
template <typename Fn>
void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn &&body) {
  int64_t count = getElementCount(shape);
  llvm::SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    body(llvm::ArrayRef<int64_t>(index), linear);
    for (int64_t dim = static_cast<int64_t>(shape.size()) - 1; dim >= 0;
         --dim) {
      if (++index[dim] < shape[dim])
        break;
      index[dim] = 0;
    }
  }
}

} // namespace mlir::parc::interp

#endif // PARC_INTERP_TENSOR_H
