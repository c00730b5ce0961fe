//===- Blocks.h - row-major index arithmetic of the cpu kernels -*- C++ -*-===//
//
// A row-major tensor seen around one dimension `dim` is [outer, length,
// inner]: concat, chunking and every collective move contiguous runs of
// `inner` bytes per position along `dim`, whatever the dtype.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_BLOCKS_H
#define PARCRT_CPU_BLOCKS_H

#include "parcrt/Backend.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace parcrt::cpu {

/// Row-major strides in elements: the last dimension has stride 1.
std::vector<int64_t> rowMajorStrides(const TensorRef &t);

/// Strides of `operand` in the index space of `result` (numpy broadcasting:
/// dimensions are right-aligned; a size-1 or missing one has stride 0).
std::vector<int64_t> broadcastStrides(const TensorRef &operand,
                                      const TensorRef &result);

/// Merges adjacent dimensions of `shape` that every operand, whose strides
/// over `shape` are `strides` (0 along a broadcast dimension), walks as one
/// dimension: contiguous together, or broadcast along both. Dimensions of
/// size 1 disappear; one dimension is always left.
void mergeDimensions(std::vector<int64_t> &shape,
                     std::initializer_list<std::vector<int64_t> *> strides);

/// The number of positions before `dim` (product of shape[0, dim)).
int64_t outerCount(const TensorRef &t, int64_t dim);
/// The bytes of one position along `dim` (product of shape(dim, rank) times
/// the element size).
size_t innerBytes(const TensorRef &t, int64_t dim);

/// For each of `outer` rows, copies positions [srcStart, srcStart + count)
/// of a dimension of length `srcLength` in `src` to positions [dstStart, ..)
/// of one of length `dstLength` in `dst`; a position is `inner` bytes.
void copyAlongDim(const void *src, int64_t srcLength, int64_t srcStart,
                  void *dst, int64_t dstLength, int64_t dstStart, int64_t count,
                  int64_t outer, size_t inner);

/// Calls `body(index, linear)` for every multi-index of `shape[0, rank)` in
/// row-major order.
template <typename Fn>
void forEachIndex(const int64_t *shape, int rank, Fn &&body) {
  int64_t count = 1;
  for (int dim = 0; dim < rank; ++dim)
    count *= shape[dim];
  std::vector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    body(static_cast<const int64_t *>(index.data()), linear);
    for (int dim = rank - 1; dim >= 0; --dim) {
      if (++index[dim] < shape[dim])
        break;
      index[dim] = 0;
    }
  }
}

/// The rows of a tensor walked in row-major order: a row fixes every index
/// but the last. For rows [begin, end) of `shape[0, rank)` (rank >= 1),
/// calls `body(row, offsets)` with offsets[k] = sum over the leading
/// dimensions d of index[d] * strides[k][d]: the row's start in operand k.
/// The offsets are updated as the index advances, not recomputed.
template <size_t N, typename Body>
void forEachRow(const int64_t *shape, int rank,
                const std::array<const int64_t *, N> &strides, int64_t begin,
                int64_t end, Body &&body) {
  int lead = rank - 1;
  std::vector<int64_t> index(lead);
  std::array<int64_t, N> offsets{};
  for (int64_t dim = lead - 1, rest = begin; dim >= 0; --dim) {
    index[dim] = rest % shape[dim];
    rest /= shape[dim];
    for (size_t k = 0; k < N; ++k)
      offsets[k] += index[dim] * strides[k][dim];
  }
  for (int64_t row = begin; row < end; ++row) {
    body(row, static_cast<const std::array<int64_t, N> &>(offsets));
    for (int dim = lead - 1; dim >= 0; --dim) {
      for (size_t k = 0; k < N; ++k)
        offsets[k] += strides[k][dim];
      if (++index[dim] < shape[dim])
        break;
      for (size_t k = 0; k < N; ++k)
        offsets[k] -= strides[k][dim] * shape[dim];
      index[dim] = 0;
    }
  }
}

/// out[i] = in[base + sum over d of index(i)[d] * steps[d]] for every
/// element i of `out` (transpose, slice, broadcast_to), on the kernel
/// threads; any dtype, by element size.
void gatherStrided(const TensorRef &in, int64_t base, const int64_t *steps,
                   const TensorRef &out);
/// The inverse: out[base + sum of index(i)[d] * steps[d]] = in[i] for every
/// element i of `in`, which must land on distinct elements (slice_grad);
/// the others are left as they are.
void scatterStrided(const TensorRef &in, int64_t base, const int64_t *steps,
                    const TensorRef &out);

/// Calls `fn` with a value of the unsigned integer type as wide as `dtype`:
/// moving elements needs only their width.
template <typename Fn> void withElementType(parcrt_dtype dtype, Fn fn) {
  switch (dtypeBytes(dtype)) {
  case 2:
    return fn(uint16_t());
  case 4:
    return fn(uint32_t());
  default:
    return fn(uint64_t());
  }
}

} // namespace parcrt::cpu

#endif // PARCRT_CPU_BLOCKS_H
