//===- Rows.cpp - row-wise pieces of softmax-like kernels -----------------===//

#include "cpu/Rows.h"

#include "cpu/Dnnl.h"
#include "cpu/Parallel.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace parcrt;

void cpu::rowMaxima(const float *x, int64_t rows, int64_t length,
                    float *maxima) {
  parallelFor(rows, rowGrain(length), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      float maximum = -INFINITY;
      for (int64_t c = 0; c < length; ++c)
        maximum = std::max(maximum, x[r * length + c]);
      maxima[r] = maximum;
    }
  });
}

void cpu::shiftedExp(const float *x, const float *shifts, int64_t rows,
                     int64_t length, float *out) {
  parallelFor(rows, rowGrain(length), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t c = 0; c < length; ++c)
        out[r * length + c] = x[r * length + c] - shifts[r];
  });
  dnnl::eltwise({::dnnl::algorithm::eltwise_exp}, out, out, rows * length);
}

void cpu::rowLogSumExp(const float *x, int64_t rows, int64_t length,
                       double *out) {
  // Chunks of rows through one scratch block of about 2^20 exponentials.
  int64_t chunk =
      std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(length, 1));
  std::vector<float> maxima(std::min(chunk, rows)),
      exps(std::min(chunk, rows) * length);
  for (int64_t first = 0; first < rows; first += chunk) {
    int64_t count = std::min(chunk, rows - first);
    const float *block = x + first * length;
    rowMaxima(block, count, length, maxima.data());
    shiftedExp(block, maxima.data(), count, length, exps.data());
    parallelFor(count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (!std::isfinite(maxima[r])) {
          out[first + r] = maxima[r];
          continue;
        }
        double sum = 0;
        for (int64_t c = 0; c < length; ++c)
          sum += exps[r * length + c];
        out[first + r] = maxima[r] + std::log(sum);
      }
    });
  }
}
