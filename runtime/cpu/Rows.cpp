//===- Rows.cpp - row-wise pieces of softmax-like kernels -----------------===//

#include "cpu/Rows.h"

#include "cpu/Dnnl.h"
#include "cpu/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace parcrt;

void cpu::rowMaxima(const float *x, int64_t rows, int64_t length,
                    float *maxima) {
  parallelFor(rows,
              std::max<int64_t>(1, elementGrain / std::max<int64_t>(length, 1)),
              [&](int64_t begin, int64_t end) {
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
  parallelFor(rows,
              std::max<int64_t>(1, elementGrain / std::max<int64_t>(length, 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r)
                  for (int64_t c = 0; c < length; ++c)
                    out[r * length + c] = x[r * length + c] - shifts[r];
              });
  dnnl::eltwise({::dnnl::algorithm::eltwise_exp}, out, out, rows * length);
}
