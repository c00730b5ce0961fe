//===- Dtypes.cpp - the dtypes the cpu kernels accept ---------------------===//

#include "cpu/Kernels.h"

#include "core/Fatal.h"

#include <string>

using namespace parcrt;

void cpu::requireF32(const char *op, const TensorRef *t, int count) {
  for (int i = 0; i < count; ++i)
    if (t[i].dtype != PARCRT_F32)
      fatal(std::string(op) +
            ": the cpu backend computes in f32 only, but "
            "tensor " +
            std::to_string(i) + " of the op is " + dtypeName(t[i].dtype));
}

void cpu::requireInteger(const char *op, const char *role, const TensorRef &t) {
  if (t.dtype != PARCRT_I32 && t.dtype != PARCRT_I64)
    fatal(std::string(op) + ": " + role + " must be i32 or i64, not " +
          dtypeName(t.dtype));
}

int64_t cpu::integerAt(const TensorRef &t, int64_t index) {
  if (t.dtype == PARCRT_I32)
    return static_cast<const int32_t *>(t.data)[index];
  return static_cast<const int64_t *>(t.data)[index];
}

void cpu::requireLabels(const char *op, const TensorRef &labels, int64_t first,
                        int64_t last) {
  for (int64_t i = 0; i < labels.numElements(); ++i) {
    int64_t label = integerAt(labels, i);
    if (label < first || label >= last)
      fatal(std::string(op) + ": labels element " + std::to_string(i) + " is " +
            std::to_string(label) + ", outside the classes [" +
            std::to_string(first) + ", " + std::to_string(last) + ")");
  }
}

int64_t cpu::shardStart(const char *op, const TensorRef &shard,
                        int64_t blockSize) {
  requireInteger(op, "the shard index", shard);
  return integerAt(shard, 0) * blockSize;
}
