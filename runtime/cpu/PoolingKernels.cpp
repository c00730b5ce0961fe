//===- PoolingKernels.cpp - max and average pooling and their gradients ---===//
//
// Hand loops over each channel's plane, threaded over planes: the window
// rules must be those of the reference evaluator and PyTorch (max takes the
// first maximum, a NaN replaces any value; averages divide by the window
// or by its input elements), which oneDNN's pooling does not promise, and
// its max-pooling backward needs the workspace of a forward pass. The
// windows are core/Windows.h's, which the cuda kernels walk too.
//
//===----------------------------------------------------------------------===//

#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include "core/Windows.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace parcrt;

namespace {
/// Calls `body(plane)` for each of the [N, C] channel planes of `input`, on
/// the kernel team.
template <typename Body>
void forEachPlane(const TensorRef &input, const Window2d &w, Body &&body) {
  cpu::parallelFor(
      input.shape[0] * input.shape[1],
      cpu::rowGrain(w.outHeight * w.outWidth * w.kernel[0] * w.kernel[1]),
      [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane)
          body(plane);
      });
}

const float *floats(const TensorRef &t) {
  return static_cast<const float *>(t.data);
}
float *mutableFloats(const TensorRef &t) {
  return static_cast<float *>(t.data);
}
} // namespace

void cpu::maxPool2d(const TensorRef *t, const int64_t *window) {
  requireF32("max_pool2d", t, 2);
  Window2d w = readPoolingWindow("max_pool2d", t[0], t[1], window);
  const float *in = floats(t[0]);
  float *out = mutableFloats(t[1]);
  forEachPlane(t[0], w, [&](int64_t plane) {
    const float *source = in + plane * w.height * w.width;
    float *target = out + plane * w.outHeight * w.outWidth;
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x)
        target[y * w.outWidth + x] = source[firstMaximum(w, source, y, x)];
  });
}

void cpu::maxPool2dGrad(const TensorRef *t, const int64_t *window) {
  requireF32("max_pool2d_grad", t, 3);
  Window2d w = readPoolingWindow("max_pool2d_grad", t[0], t[1], window);
  const float *in = floats(t[0]), *g = floats(t[1]);
  float *dx = mutableFloats(t[2]);
  forEachPlane(t[0], w, [&](int64_t plane) {
    const float *source = in + plane * w.height * w.width;
    const float *gradient = g + plane * w.outHeight * w.outWidth;
    float *target = dx + plane * w.height * w.width;
    std::fill(target, target + w.height * w.width, 0.0f);
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x)
        target[firstMaximum(w, source, y, x)] += gradient[y * w.outWidth + x];
  });
}

void cpu::avgPool2d(const TensorRef *t, const int64_t *window,
                    bool countIncludePad) {
  requireF32("avg_pool2d", t, 2);
  Window2d w = readPoolingWindow("avg_pool2d", t[0], t[1], window);
  const float *in = floats(t[0]);
  float *out = mutableFloats(t[1]);
  forEachPlane(t[0], w, [&](int64_t plane) {
    const float *source = in + plane * w.height * w.width;
    float *target = out + plane * w.outHeight * w.outWidth;
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x) {
        double sum = 0;
        w.forEachTap(y, x, [&](int64_t tap) { sum += source[tap]; });
        target[y * w.outWidth + x] =
            static_cast<float>(sum / poolingDivisor(w, countIncludePad, y, x));
      }
  });
}

void cpu::avgPool2dGrad(const TensorRef *t, const int64_t *window,
                        bool countIncludePad) {
  requireF32("avg_pool2d_grad", t, 2);
  Window2d w = readPoolingWindow("avg_pool2d_grad", t[1], t[0], window);
  const float *g = floats(t[0]);
  float *dx = mutableFloats(t[1]);
  forEachPlane(t[1], w, [&](int64_t plane) {
    const float *gradient = g + plane * w.outHeight * w.outWidth;
    float *target = dx + plane * w.height * w.width;
    // Sums in double, in the evaluator's order (windows row-major).
    std::vector<double> sums(w.height * w.width, 0.0);
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x) {
        double share = gradient[y * w.outWidth + x] /
                       poolingDivisor(w, countIncludePad, y, x);
        w.forEachTap(y, x, [&](int64_t tap) { sums[tap] += share; });
      }
    for (int64_t i = 0; i < w.height * w.width; ++i)
      target[i] = static_cast<float>(sums[i]);
  });
}
