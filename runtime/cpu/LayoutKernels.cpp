//===- LayoutKernels.cpp - data movement: reshape to embedding lookups ----===//
//
// These kernels move elements without reading them as numbers, so they work
// on every dtype by element size.
//
//===----------------------------------------------------------------------===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"

#include "core/Fatal.h"
#include "parcrt/Safetensors.h"

#include <cstring>
#include <string>

using namespace parcrt;

void cpu::copy(const TensorRef *t) {
  if (t[0].data != t[1].data)
    std::memmove(t[1].data, t[0].data, t[1].bytes());
}

void cpu::transpose(const TensorRef *t, const int64_t *perm) {
  std::vector<int64_t> inStrides = rowMajorStrides(t[0]);
  std::vector<int64_t> strides(t[1].rank);
  for (int dim = 0; dim < t[1].rank; ++dim)
    strides[dim] = inStrides[perm[dim]];
  gatherStrided(t[0], 0, strides.data(), t[1]);
}

void cpu::concat(const TensorRef *inputs, int numInputs,
                 const TensorRef &result, int64_t axis) {
  int64_t outer = outerCount(result, axis);
  size_t inner = innerBytes(result, axis);
  int64_t start = 0;
  for (int i = 0; i < numInputs; ++i) {
    int64_t length = inputs[i].shape[axis];
    copyAlongDim(inputs[i].data, length, 0, result.data, result.shape[axis],
                 start, length, outer, inner);
    start += length;
  }
}

void cpu::slice(const TensorRef *t, const int64_t *offsets,
                const int64_t *strides) {
  std::vector<int64_t> inStrides = rowMajorStrides(t[0]);
  int64_t base = 0;
  std::vector<int64_t> steps(t[1].rank);
  for (int dim = 0; dim < t[1].rank; ++dim) {
    base += offsets[dim] * inStrides[dim];
    steps[dim] = strides[dim] * inStrides[dim];
  }
  gatherStrided(t[0], base, steps.data(), t[1]);
}

void cpu::constant(const TensorRef &result, const double *values,
                   int64_t numValues) {
  int64_t count = result.numElements();
  for (int64_t i = 0; i < count; ++i) {
    double value = values[numValues == 1 ? 0 : i];
    switch (result.dtype) {
    case PARCRT_F32:
      static_cast<float *>(result.data)[i] = static_cast<float>(value);
      break;
    case PARCRT_F16:
      static_cast<uint16_t *>(result.data)[i] =
          floatToHalf(static_cast<float>(value));
      break;
    case PARCRT_BF16:
      static_cast<uint16_t *>(result.data)[i] =
          floatToBfloat16(static_cast<float>(value));
      break;
    case PARCRT_I32:
      static_cast<int32_t *>(result.data)[i] = static_cast<int32_t>(value);
      break;
    case PARCRT_I64:
      static_cast<int64_t *>(result.data)[i] = static_cast<int64_t>(value);
      break;
    }
  }
}

void cpu::embedding(const TensorRef *t, bool hasShard) {
  const TensorRef &table = t[0], &ids = t[1], &result = t[hasShard ? 3 : 2];
  requireInteger("embedding", "ids", ids);
  int64_t vocab = table.shape[0];
  size_t rowBytes = innerBytes(table, 0);
  // A table with a shard index holds one block of the vocabulary; ids
  // outside it contribute zero rows.
  int64_t offset = hasShard ? shardStart("embedding", t[2], vocab) : 0;
  std::memset(result.data, 0, result.bytes());
  const auto *rows = static_cast<const uint8_t *>(table.data);
  auto *out = static_cast<uint8_t *>(result.data);
  for (int64_t n = 0; n < ids.numElements(); ++n) {
    int64_t id = integerAt(ids, n) - offset;
    if (id >= 0 && id < vocab)
      std::memcpy(out + n * rowBytes, rows + id * rowBytes, rowBytes);
    else if (!hasShard)
      fatal("embedding: ids element " + std::to_string(n) + " is " +
            std::to_string(id) + ", outside the table's rows [0, " +
            std::to_string(vocab) + ")");
  }
}

void cpu::take(const TensorRef *t, bool hasShard) {
  const TensorRef &input = t[0], &indices = t[1], &result = t[hasShard ? 3 : 2];
  requireInteger("take", "indices", indices);
  int64_t classes = input.shape[input.rank - 1];
  int64_t offset = hasShard ? shardStart("take", t[2], classes) : 0;
  size_t bytes = dtypeBytes(input.dtype);
  std::memset(result.data, 0, result.bytes());
  const auto *in = static_cast<const uint8_t *>(input.data);
  auto *out = static_cast<uint8_t *>(result.data);
  for (int64_t n = 0; n < indices.numElements(); ++n) {
    int64_t index = integerAt(indices, n) - offset;
    if (index >= 0 && index < classes)
      std::memcpy(out + n * bytes, in + (n * classes + index) * bytes, bytes);
    else if (!hasShard)
      fatal("take: indices element " + std::to_string(n) + " is " +
            std::to_string(index) + ", outside [0, " + std::to_string(classes) +
            ")");
  }
}
