//===- Blocks.cpp - row-major index arithmetic of the cpu kernels ---------===//

#include "cpu/Blocks.h"

#include <cstring>

using namespace parcrt;

std::vector<int64_t> cpu::rowMajorStrides(const TensorRef &t) {
  std::vector<int64_t> strides(t.rank, 1);
  for (int dim = t.rank - 2; dim >= 0; --dim)
    strides[dim] = strides[dim + 1] * t.shape[dim + 1];
  return strides;
}

int64_t cpu::outerCount(const TensorRef &t, int64_t dim) {
  int64_t count = 1;
  for (int64_t d = 0; d < dim; ++d)
    count *= t.shape[d];
  return count;
}

size_t cpu::innerBytes(const TensorRef &t, int64_t dim) {
  size_t bytes = dtypeBytes(t.dtype);
  for (int64_t d = dim + 1; d < t.rank; ++d)
    bytes *= t.shape[d];
  return bytes;
}

void cpu::copyAlongDim(const void *src, int64_t srcLength, int64_t srcStart,
                       void *dst, int64_t dstLength, int64_t dstStart,
                       int64_t count, int64_t outer, size_t inner) {
  const auto *from = static_cast<const uint8_t *>(src) + srcStart * inner;
  auto *to = static_cast<uint8_t *>(dst) + dstStart * inner;
  for (int64_t row = 0; row < outer; ++row)
    std::memcpy(to + row * dstLength * inner, from + row * srcLength * inner,
                count * inner);
}
