//===- ReductionKernels.cpp - reduce_sum, reduce_mean, reduce_max ---------===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"

#include <algorithm>
#include <cmath>

using namespace parcrt;

void cpu::reduce(Backend::Reduce op, const TensorRef *t, const int64_t *axes,
                 int numAxes) {
  requireF32(op == Backend::Reduce::Max ? "reduce_max" : "reduce_sum", t, 2);
  const TensorRef &in = t[0];
  std::vector<bool> reduced(in.rank, false);
  int64_t count = 1;
  for (int i = 0; i < numAxes; ++i) {
    reduced[axes[i]] = true;
    count *= in.shape[axes[i]];
  }
  // An input index's output position: its kept dimensions in order (the
  // same linear position whether or not the result keeps size-1 dims).
  TensorRef kept = in;
  for (int dim = 0; dim < in.rank; ++dim)
    if (reduced[dim])
      kept.shape[dim] = 1;
  std::vector<int64_t> keptStrides = rowMajorStrides(kept);
  bool max = op == Backend::Reduce::Max;
  std::vector<double> totals(t[1].numElements(), max ? -INFINITY : 0.0);
  const auto *values = static_cast<const float *>(in.data);
  forEachIndex(in.shape, in.rank, [&](const int64_t *index, int64_t linear) {
    int64_t target = 0;
    for (int dim = 0; dim < in.rank; ++dim)
      if (!reduced[dim])
        target += index[dim] * keptStrides[dim];
    totals[target] = max ? std::max(totals[target], double(values[linear]))
                         : totals[target] + values[linear];
  });
  auto *out = static_cast<float *>(t[1].data);
  for (size_t i = 0; i < totals.size(); ++i)
    out[i] = static_cast<float>(op == Backend::Reduce::Mean ? totals[i] / count
                                                            : totals[i]);
}
