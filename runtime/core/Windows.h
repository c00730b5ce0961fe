//===- Windows.h - the input elements conv2d and the poolings read -*- C++
//-*-===//
//
// Output position (y, x) of conv2d or a pooling reads input row
// y * stride - pad_top + k * dilation and column x * stride - pad_left +
// k * dilation for each kernel tap k, where they lie inside the image.
// Both backends walk windows through Window2d (the cpu backend's pooling
// loops, the cuda backend's im2col, col2im and pooling kernels), so the cpu
// tests run the index arithmetic the cuda kernels run. The readers check a
// kernel's tensors against the geometry the ABI passes (parcrt/Ops.def) and
// end the run on a mismatch.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_WINDOWS_H
#define PARCRT_CORE_WINDOWS_H

#include "core/HostDevice.h"
#include "parcrt/Backend.h"

#include <cstdint>

namespace parcrt {

struct Window2d {
  int64_t height = 0, width = 0, outHeight = 0, outWidth = 0;
  /// [height, width] each; padding [top, left, bottom, right].
  int64_t kernel[2] = {1, 1}, strides[2] = {1, 1}, dilations[2] = {1, 1};
  int64_t padding[4] = {0, 0, 0, 0};

  /// The input row tap `ky` of output row `y` reads (maybe outside).
  PARCRT_HOST_DEVICE int64_t row(int64_t y, int64_t ky) const {
    return y * strides[0] - padding[0] + ky * dilations[0];
  }
  PARCRT_HOST_DEVICE int64_t column(int64_t x, int64_t kx) const {
    return x * strides[1] - padding[1] + kx * dilations[1];
  }
  /// The output row whose tap `ky` reads input row `in`, if one does.
  PARCRT_HOST_DEVICE bool outputRow(int64_t in, int64_t ky, int64_t &y) const {
    return outputOf(in + padding[0] - ky * dilations[0], strides[0], outHeight,
                    y);
  }
  PARCRT_HOST_DEVICE bool outputColumn(int64_t in, int64_t kx,
                                       int64_t &x) const {
    return outputOf(in + padding[1] - kx * dilations[1], strides[1], outWidth,
                    x);
  }
  /// Calls `body(offset)` with the plane offset of each input element that
  /// output position (y, x) reads, in the window's row-major order.
  template <typename Body>
  PARCRT_HOST_DEVICE void forEachTap(int64_t y, int64_t x, Body &&body) const {
    for (int64_t ky = 0; ky < kernel[0]; ++ky) {
      int64_t r = row(y, ky);
      if (r < 0 || r >= height)
        continue;
      for (int64_t kx = 0; kx < kernel[1]; ++kx) {
        int64_t c = column(x, kx);
        if (c >= 0 && c < width)
          body(r * width + c);
      }
    }
  }
  /// Calls `body(ky, kx, y, x)` for each output position (y, x) whose tap
  /// (ky, kx) reads input element (r, c): forEachTap's inverse, for the
  /// gradients that gather rather than scatter.
  template <typename Body>
  PARCRT_HOST_DEVICE void forEachReader(int64_t r, int64_t c,
                                        Body &&body) const {
    for (int64_t ky = 0; ky < kernel[0]; ++ky) {
      int64_t y;
      if (!outputRow(r, ky, y))
        continue;
      for (int64_t kx = 0; kx < kernel[1]; ++kx) {
        int64_t x;
        if (outputColumn(c, kx, x))
          body(ky, kx, y, x);
      }
    }
  }

private:
  PARCRT_HOST_DEVICE static bool outputOf(int64_t shifted, int64_t stride,
                                          int64_t size, int64_t &out) {
    if (shifted < 0 || shifted % stride != 0)
      return false;
    out = shifted / stride;
    return out < size;
  }
};

/// The plane offset of the element max_pool2d takes at (y, x): the first
/// maximum in the window's order, a NaN replacing any value (PyTorch's and
/// the reference evaluator's rule).
template <typename T>
PARCRT_HOST_DEVICE int64_t firstMaximum(const Window2d &w, const T *plane,
                                        int64_t y, int64_t x) {
  int64_t best = -1;
  w.forEachTap(y, x, [&](int64_t tap) {
    if (best < 0 || plane[tap] > plane[best] || plane[tap] != plane[tap])
      best = tap;
  });
  return best;
}

/// What avg_pool2d divides the window's sum at (y, x) by: the window's
/// size, or with `countIncludePad` false the input elements it covers.
PARCRT_HOST_DEVICE inline double
poolingDivisor(const Window2d &w, bool countIncludePad, int64_t y, int64_t x) {
  if (countIncludePad)
    return double(w.kernel[0]) * double(w.kernel[1]);
  int64_t count = 0;
  w.forEachTap(y, x, [&](int64_t) { ++count; });
  return double(count);
}

/// conv2d's tensors and geometry: input [N, C, H, W], weight
/// [O, C / groups, KH, KW], output [N, O, OH, OW].
struct ConvolutionShape {
  int64_t input[4], weight[4], output[4];
  int64_t strides[2], padding[4], dilations[2], groups;

  /// The window of one output plane over one input plane.
  Window2d getWindow() const;
};

/// The convolution of `input`, `weight` and `output` under the ABI's
/// `geometry` (strides, padding, dilations, groups), once their shapes
/// agree with it; ends the run naming `op` otherwise.
ConvolutionShape readConvolution(const char *op, const TensorRef &input,
                                 const TensorRef &weight,
                                 const TensorRef &output,
                                 const int64_t *geometry);

/// The window of a pooling of `input` into `output` under the ABI's `ints`
/// (kernel, strides, padding, dilations), once their shapes agree with it;
/// ends the run naming `op` otherwise.
Window2d readPoolingWindow(const char *op, const TensorRef &input,
                           const TensorRef &output, const int64_t *ints);

} // namespace parcrt

#endif // PARCRT_CORE_WINDOWS_H
