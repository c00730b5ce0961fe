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
  auto combine = [max](double &total, float value) {
    total = max ? std::max(total, double(value)) : total + value;
  };
  // The common layouts first: the reduced dimensions one contiguous block,
  // between kept outer and kept inner ones (weight gradients summed over
  // the batch: [B, K, N] over B). The values reach each total in the same
  // order as in the general loop below, so the results are identical.
  int first = 0, last = in.rank;
  while (first < in.rank && !reduced[first])
    ++first;
  while (last > first && !reduced[last - 1])
    --last;
  if (std::all_of(reduced.begin() + first, reduced.begin() + last,
                  [](bool r) { return r; })) {
    int64_t outer = 1, block = 1, inner = 1;
    for (int dim = 0; dim < in.rank; ++dim)
      (dim < first ? outer : dim < last ? block : inner) *= in.shape[dim];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t r = 0; r < block; ++r) {
        const float *row = values + (o * block + r) * inner;
        double *target = totals.data() + o * inner;
        for (int64_t i = 0; i < inner; ++i)
          combine(target[i], row[i]);
      }
  } else {
    forEachIndex(in.shape, in.rank, [&](const int64_t *index, int64_t linear) {
      int64_t target = 0;
      for (int dim = 0; dim < in.rank; ++dim)
        if (!reduced[dim])
          target += index[dim] * keptStrides[dim];
      combine(totals[target], values[linear]);
    });
  }
  auto *out = static_cast<float *>(t[1].data);
  for (size_t i = 0; i < totals.size(); ++i)
    out[i] = static_cast<float>(op == Backend::Reduce::Mean ? totals[i] / count
                                                            : totals[i]);
}
