//===- PoolingKernels.cpp - max and average pooling and their gradients ---===//
//
// Hand loops over each channel's plane, threaded over planes: the window
// rules must be those of the reference evaluator and PyTorch (max takes the
// first maximum, a NaN replaces any value; averages divide by the window
// or by its input elements), which oneDNN's pooling does not promise, and
// its max-pooling backward needs the workspace of a forward pass.
//
//===----------------------------------------------------------------------===//

#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include "core/Fatal.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace parcrt;

namespace {
/// A pooling's window over an [N, C, H, W] input and its output, as the
/// ABI passes it: kernel, strides, padding, dilations.
struct Window {
  int64_t planes, height, width, outHeight, outWidth;
  const int64_t *kernel, *strides, *padding, *dilations;

  /// Calls `body(tap)` with the plane offset of each input element of
  /// output position (y, x), in the window's row-major order.
  template <typename Body>
  void forEachTap(int64_t y, int64_t x, Body &&body) const {
    for (int64_t ky = 0; ky < kernel[0]; ++ky) {
      int64_t row = y * strides[0] - padding[0] + ky * dilations[0];
      if (row < 0 || row >= height)
        continue;
      for (int64_t kx = 0; kx < kernel[1]; ++kx) {
        int64_t column = x * strides[1] - padding[1] + kx * dilations[1];
        if (column >= 0 && column < width)
          body(row * width + column);
      }
    }
  }

  /// Calls `body(plane)` for each channel plane, on the kernel team.
  template <typename Body> void forEachPlane(Body &&body) const {
    cpu::parallelFor(
        planes, cpu::rowGrain(outHeight * outWidth * kernel[0] * kernel[1]),
        [&](int64_t begin, int64_t end) {
          for (int64_t plane = begin; plane < end; ++plane)
            body(plane);
        });
  }
};

/// The window of `input` pooled into `output`, once their shapes agree
/// with `ints`.
Window windowOf(const char *op, const TensorRef &input, const TensorRef &output,
                const int64_t *ints) {
  Window w{input.shape[0] * input.shape[1],
           input.shape[2],
           input.shape[3],
           output.shape[2],
           output.shape[3],
           ints,
           ints + 2,
           ints + 4,
           ints + 8};
  bool agree = input.rank == 4 && output.rank == 4 &&
               output.shape[0] == input.shape[0] &&
               output.shape[1] == input.shape[1];
  int64_t sizes[2] = {w.height, w.width}, outs[2] = {w.outHeight, w.outWidth};
  for (int i = 0; agree && i < 2; ++i) {
    int64_t padded = sizes[i] + w.padding[i] + w.padding[2 + i];
    int64_t span = w.dilations[i] * (w.kernel[i] - 1) + 1;
    agree = w.kernel[i] >= 1 && w.strides[i] >= 1 && w.dilations[i] >= 1 &&
            w.padding[i] >= 0 && w.padding[i] <= w.kernel[i] / 2 &&
            w.padding[2 + i] >= 0 && w.padding[2 + i] <= w.kernel[i] / 2 &&
            span <= padded && outs[i] == (padded - span) / w.strides[i] + 1;
  }
  if (!agree)
    fatal(std::string(op) +
          ": the tensors' shapes do not follow from the window");
  return w;
}

/// The plane offset of the element max_pool2d takes at (y, x).
int64_t argmax(const Window &w, const float *plane, int64_t y, int64_t x) {
  int64_t best = -1;
  w.forEachTap(y, x, [&](int64_t tap) {
    if (best < 0 || plane[tap] > plane[best] || std::isnan(plane[tap]))
      best = tap;
  });
  return best;
}

double divisor(const Window &w, bool countIncludePad, int64_t y, int64_t x) {
  if (countIncludePad)
    return double(w.kernel[0]) * w.kernel[1];
  int64_t count = 0;
  w.forEachTap(y, x, [&](int64_t) { ++count; });
  return count;
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
  Window w = windowOf("max_pool2d", t[0], t[1], window);
  const float *in = floats(t[0]);
  float *out = mutableFloats(t[1]);
  w.forEachPlane([&](int64_t plane) {
    const float *source = in + plane * w.height * w.width;
    float *target = out + plane * w.outHeight * w.outWidth;
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x)
        target[y * w.outWidth + x] = source[argmax(w, source, y, x)];
  });
}

void cpu::maxPool2dGrad(const TensorRef *t, const int64_t *window) {
  requireF32("max_pool2d_grad", t, 3);
  Window w = windowOf("max_pool2d_grad", t[0], t[1], window);
  const float *in = floats(t[0]), *g = floats(t[1]);
  float *dx = mutableFloats(t[2]);
  w.forEachPlane([&](int64_t plane) {
    const float *source = in + plane * w.height * w.width;
    const float *gradient = g + plane * w.outHeight * w.outWidth;
    float *target = dx + plane * w.height * w.width;
    std::fill(target, target + w.height * w.width, 0.0f);
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x)
        target[argmax(w, source, y, x)] += gradient[y * w.outWidth + x];
  });
}

void cpu::avgPool2d(const TensorRef *t, const int64_t *window,
                    bool countIncludePad) {
  requireF32("avg_pool2d", t, 2);
  Window w = windowOf("avg_pool2d", t[0], t[1], window);
  const float *in = floats(t[0]);
  float *out = mutableFloats(t[1]);
  w.forEachPlane([&](int64_t plane) {
    const float *source = in + plane * w.height * w.width;
    float *target = out + plane * w.outHeight * w.outWidth;
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x) {
        double sum = 0;
        w.forEachTap(y, x, [&](int64_t tap) { sum += source[tap]; });
        target[y * w.outWidth + x] =
            static_cast<float>(sum / divisor(w, countIncludePad, y, x));
      }
  });
}

void cpu::avgPool2dGrad(const TensorRef *t, const int64_t *window,
                        bool countIncludePad) {
  requireF32("avg_pool2d_grad", t, 2);
  Window w = windowOf("avg_pool2d_grad", t[1], t[0], window);
  const float *g = floats(t[0]);
  float *dx = mutableFloats(t[1]);
  w.forEachPlane([&](int64_t plane) {
    const float *gradient = g + plane * w.outHeight * w.outWidth;
    float *target = dx + plane * w.height * w.width;
    // Sums in double, in the evaluator's order (windows row-major).
    std::vector<double> sums(w.height * w.width, 0.0);
    for (int64_t y = 0; y < w.outHeight; ++y)
      for (int64_t x = 0; x < w.outWidth; ++x) {
        double share =
            gradient[y * w.outWidth + x] / divisor(w, countIncludePad, y, x);
        w.forEachTap(y, x, [&](int64_t tap) { sums[tap] += share; });
      }
    for (int64_t i = 0; i < w.height * w.width; ++i)
      target[i] = static_cast<float>(sums[i]);
  });
}
