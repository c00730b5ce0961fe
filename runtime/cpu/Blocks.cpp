//===- Blocks.cpp - row-major index arithmetic of the cpu kernels ---------===//

#include "cpu/Blocks.h"
#include "cpu/Parallel.h"

#include <cstring>

using namespace parcrt;

std::vector<int64_t> cpu::rowMajorStrides(const TensorRef &t) {
  std::vector<int64_t> strides(t.rank, 1);
  for (int dim = t.rank - 2; dim >= 0; --dim)
    strides[dim] = strides[dim + 1] * t.shape[dim + 1];
  return strides;
}

std::vector<int64_t> cpu::broadcastStrides(const TensorRef &operand,
                                           const TensorRef &result) {
  std::vector<int64_t> strides(result.rank, 0);
  std::vector<int64_t> own = rowMajorStrides(operand);
  int offset = result.rank - operand.rank;
  for (int dim = 0; dim < operand.rank; ++dim)
    if (operand.shape[dim] != 1)
      strides[offset + dim] = own[dim];
  return strides;
}

void cpu::mergeDimensions(
    std::vector<int64_t> &shape,
    std::initializer_list<std::vector<int64_t> *> strides) {
  // Built from the innermost dimension out: each dimension joins the one
  // inside it when every operand's stride over it is the inner one's times
  // the inner size (0 = 0 for a broadcast pair).
  std::vector<int64_t> merged;
  std::vector<std::vector<int64_t>> mergedStrides(strides.size());
  for (int dim = static_cast<int>(shape.size()) - 1; dim >= 0; --dim) {
    if (shape[dim] == 1)
      continue;
    bool joins = !merged.empty();
    size_t operand = 0;
    for (const std::vector<int64_t> *own : strides)
      joins = joins &&
              (*own)[dim] == mergedStrides[operand++].back() * merged.back();
    if (joins) {
      merged.back() *= shape[dim];
      continue;
    }
    merged.push_back(shape[dim]);
    operand = 0;
    for (const std::vector<int64_t> *own : strides)
      mergedStrides[operand++].push_back((*own)[dim]);
  }
  if (merged.empty()) {
    merged.push_back(1);
    for (std::vector<int64_t> &own : mergedStrides)
      own.push_back(0);
  }
  shape.assign(merged.rbegin(), merged.rend());
  size_t operand = 0;
  for (std::vector<int64_t> *own : strides) {
    own->assign(mergedStrides[operand].rbegin(), mergedStrides[operand].rend());
    ++operand;
  }
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

/// Calls `body(strided, dense, length, step)` for every row of `walked`
/// (the tensor whose elements are enumerated): `strided` and `dense` the
/// row's first element in the strided and in the dense tensor, `step` the
/// strided tensor's step along the row. Rows run on the kernel threads.
template <typename Body>
static void forEachStridedRow(const TensorRef &walked, const int64_t *steps,
                              Body &&body) {
  int64_t count = walked.numElements();
  if (count == 0)
    return;
  // A scalar is one row of one element.
  static const int64_t one = 1, none = 0;
  int rank = walked.rank ? walked.rank : 1;
  const int64_t *shape = walked.rank ? walked.shape : &one;
  if (!walked.rank)
    steps = &none;
  int64_t length = shape[rank - 1], step = steps[rank - 1];
  cpu::parallelFor(
      count / length, cpu::rowGrain(length), [&](int64_t begin, int64_t end) {
        cpu::forEachRow<1>(shape, rank, {steps}, begin, end,
                           [&](int64_t row, const std::array<int64_t, 1> &at) {
                             body(at[0], row * length, length, step);
                           });
      });
}

void cpu::gatherStrided(const TensorRef &in, int64_t base, const int64_t *steps,
                        const TensorRef &out) {
  withElementType(in.dtype, [&](auto element) {
    using T = decltype(element);
    const T *from = static_cast<const T *>(in.data) + base;
    T *to = static_cast<T *>(out.data);
    forEachStridedRow(
        out, steps,
        [&](int64_t strided, int64_t dense, int64_t length, int64_t step) {
          if (step == 1) {
            std::memcpy(to + dense, from + strided, length * sizeof(T));
            return;
          }
          for (int64_t j = 0; j < length; ++j)
            to[dense + j] = from[strided + j * step];
        });
  });
}

void cpu::scatterStrided(const TensorRef &in, int64_t base,
                         const int64_t *steps, const TensorRef &out) {
  withElementType(in.dtype, [&](auto element) {
    using T = decltype(element);
    const T *from = static_cast<const T *>(in.data);
    T *to = static_cast<T *>(out.data) + base;
    forEachStridedRow(
        in, steps,
        [&](int64_t strided, int64_t dense, int64_t length, int64_t step) {
          for (int64_t j = 0; j < length; ++j)
            to[strided + j * step] = from[dense + j];
        });
  });
}
