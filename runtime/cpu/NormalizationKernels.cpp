//===- NormalizationKernels.cpp - softmax, layer_norm, rms_norm -----------===//
//
// Sums are accumulated in double and each result rounded once to f32, which
// is what the reference evaluator's f32 mode computes.
//
//===----------------------------------------------------------------------===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace parcrt;

void cpu::softmax(const TensorRef *t, int64_t axis) {
  requireF32("softmax", t, 2);
  const auto *in = static_cast<const float *>(t[0].data);
  auto *out = static_cast<float *>(t[1].data);
  int64_t length = t[0].shape[axis];
  int64_t inner = innerBytes(t[0], axis) / sizeof(float);
  int64_t outer = outerCount(t[0], axis);
  std::vector<double> e(length);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * length * inner + i;
      // Subtracting the maximum keeps exp() finite for large logits.
      double maxValue = -INFINITY;
      for (int64_t n = 0; n < length; ++n)
        maxValue = std::max(maxValue, double(in[base + n * inner]));
      // A line of -inf (every key masked) is all zeros, not NaN.
      if (maxValue == -INFINITY) {
        for (int64_t n = 0; n < length; ++n)
          out[base + n * inner] = 0.0f;
        continue;
      }
      double total = 0;
      for (int64_t n = 0; n < length; ++n) {
        e[n] = std::exp(in[base + n * inner] - maxValue);
        total += e[n];
      }
      for (int64_t n = 0; n < length; ++n)
        out[base + n * inner] = static_cast<float>(e[n] / total);
    }
}

void cpu::layerNorm(const TensorRef *t, double epsilon) {
  requireF32("layer_norm", t, 4);
  const auto *in = static_cast<const float *>(t[0].data);
  const auto *gamma = static_cast<const float *>(t[1].data);
  const auto *beta = static_cast<const float *>(t[2].data);
  auto *out = static_cast<float *>(t[3].data);
  int64_t features = t[0].shape[t[0].rank - 1];
  int64_t rows = features ? t[0].numElements() / features : 0;
  parallelFor(rows, rowGrain(features), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const float *x = in + row * features;
      double mean = 0;
      for (int64_t n = 0; n < features; ++n)
        mean += x[n];
      mean /= features;
      double variance = 0;
      for (int64_t n = 0; n < features; ++n)
        variance += (x[n] - mean) * (x[n] - mean);
      variance /= features;
      double rstd = 1.0 / std::sqrt(variance + epsilon);
      for (int64_t n = 0; n < features; ++n)
        out[row * features + n] =
            static_cast<float>((x[n] - mean) * rstd * gamma[n] + beta[n]);
    }
  });
}

void cpu::rmsNorm(const TensorRef *t, double epsilon) {
  requireF32("rms_norm", t, 3);
  const auto *in = static_cast<const float *>(t[0].data);
  const auto *gamma = static_cast<const float *>(t[1].data);
  auto *out = static_cast<float *>(t[2].data);
  int64_t features = t[0].shape[t[0].rank - 1];
  int64_t rows = features ? t[0].numElements() / features : 0;
  for (int64_t row = 0; row < rows; ++row) {
    const float *x = in + row * features;
    double meanSquare = 0;
    for (int64_t n = 0; n < features; ++n)
      meanSquare += double(x[n]) * x[n];
    meanSquare /= features;
    double rms = 1.0 / std::sqrt(meanSquare + epsilon);
    for (int64_t n = 0; n < features; ++n)
      out[row * features + n] = static_cast<float>(x[n] * rms * gamma[n]);
  }
}
