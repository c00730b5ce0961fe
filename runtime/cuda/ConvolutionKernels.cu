//===- ConvolutionKernels.cu - im2col, col2im and the poolings ------------===//
//
// conv2d and its gradients are GEMMs over im2col columns (CudaBackend.cpp
// runs cuBLAS on them); the columns of one image and one group are built
// and folded back here. Every kernel writes each of its outputs from one
// thread (col2im and the pooling gradients gather what reaches an input
// element rather than scatter-adding), so results are deterministic. The
// windows are core/Windows.h's, which the cpu backend's poolings walk too.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"
#include "Kernels.h"
#include "core/Windows.h"

#include <cuda_runtime.h>

#include <algorithm>

using namespace parcrt;
using namespace parcrt::cuda;

namespace {

#include "DeviceCommon.cuh"

/// columns[(c KH + ky) KW + kx][y OW + x] = image[c][row][column] of tap
/// (ky, kx) at output (y, x), 0 in the padding; `channels` planes.
__global__ void im2colKernel(const float *image, float *columns, Window2d w,
                             int64_t channels) {
  int64_t positions = w.outHeight * w.outWidth;
  int64_t taps = w.kernel[0] * w.kernel[1];
  GRID_STRIDE_LOOP(i, channels * taps * positions) {
    int64_t position = i % positions, tap = (i / positions) % taps;
    int64_t channel = i / (positions * taps);
    int64_t r = w.row(position / w.outWidth, tap / w.kernel[1]);
    int64_t c = w.column(position % w.outWidth, tap % w.kernel[1]);
    bool inside = r >= 0 && r < w.height && c >= 0 && c < w.width;
    columns[i] = inside ? image[(channel * w.height + r) * w.width + c] : 0.0f;
  }
}

/// image[c][row][column] = the sum of the columns' entries that im2col took
/// from it, in tap order.
__global__ void col2imKernel(const float *columns, float *image, Window2d w,
                             int64_t channels) {
  int64_t positions = w.outHeight * w.outWidth;
  GRID_STRIDE_LOOP(i, channels * w.height * w.width) {
    int64_t c = i % w.width, r = (i / w.width) % w.height;
    int64_t channel = i / (w.height * w.width);
    float sum = 0.0f;
    w.forEachReader(r, c, [&](int64_t ky, int64_t kx, int64_t y, int64_t x) {
      int64_t tap = (channel * w.kernel[0] + ky) * w.kernel[1] + kx;
      sum += columns[tap * positions + y * w.outWidth + x];
    });
    image[i] = sum;
  }
}

__global__ void maxPoolKernel(const float *in, float *out, Window2d w,
                              int64_t planes) {
  int64_t positions = w.outHeight * w.outWidth;
  GRID_STRIDE_LOOP(i, planes * positions) {
    const float *plane = in + (i / positions) * w.height * w.width;
    int64_t position = i % positions;
    out[i] = plane[firstMaximum(w, plane, position / w.outWidth,
                                position % w.outWidth)];
  }
}

/// Each input element sums the gradients of the outputs that took it.
__global__ void maxPoolGradKernel(const float *in, const float *gradient,
                                  float *dx, Window2d w, int64_t planes) {
  int64_t area = w.height * w.width, positions = w.outHeight * w.outWidth;
  GRID_STRIDE_LOOP(i, planes * area) {
    int64_t offset = i % area, planeIndex = i / area;
    const float *plane = in + planeIndex * area;
    const float *g = gradient + planeIndex * positions;
    int64_t r = offset / w.width, c = offset % w.width;
    float sum = 0.0f;
    w.forEachReader(r, c, [&](int64_t, int64_t, int64_t y, int64_t x) {
      if (firstMaximum(w, plane, y, x) == offset)
        sum += g[y * w.outWidth + x];
    });
    dx[i] = sum;
  }
}

/// Sums in double, as the cpu backend does.
__global__ void avgPoolKernel(const float *in, float *out, Window2d w,
                              int64_t planes, bool countIncludePad) {
  int64_t positions = w.outHeight * w.outWidth;
  GRID_STRIDE_LOOP(i, planes * positions) {
    const float *plane = in + (i / positions) * w.height * w.width;
    int64_t y = (i % positions) / w.outWidth, x = (i % positions) % w.outWidth;
    double sum = 0;
    w.forEachTap(y, x, [&](int64_t tap) { sum += plane[tap]; });
    out[i] = static_cast<float>(sum / poolingDivisor(w, countIncludePad, y, x));
  }
}

__global__ void avgPoolGradKernel(const float *gradient, float *dx, Window2d w,
                                  int64_t planes, bool countIncludePad) {
  int64_t area = w.height * w.width, positions = w.outHeight * w.outWidth;
  GRID_STRIDE_LOOP(i, planes * area) {
    const float *g = gradient + (i / area) * positions;
    int64_t r = (i % area) / w.width, c = (i % area) % w.width;
    double sum = 0;
    w.forEachReader(r, c, [&](int64_t, int64_t, int64_t y, int64_t x) {
      sum += g[y * w.outWidth + x] / poolingDivisor(w, countIncludePad, y, x);
    });
    dx[i] = static_cast<float>(sum);
  }
}

/// Launches `kernel` over `n` elements (nothing for none).
template <typename... Parameters, typename... Arguments>
cudaError_t launchOver(int64_t n, cudaStream_t stream,
                       void (*kernel)(Parameters...), Arguments... arguments) {
  if (n == 0)
    return cudaSuccess;
  kernel<<<gridFor(n), kThreads, 0, stream>>>(arguments...);
  return cudaGetLastError();
}

float *floats(const TensorRef &t) { return static_cast<float *>(t.data); }

/// The [N, C] channel planes of an NCHW tensor.
int64_t planesOf(const TensorRef &t) { return t.shape[0] * t.shape[1]; }

} // namespace

cudaError_t parcrt::cuda::launchIm2col(const float *image, float *columns,
                                       const Window2d &w, int64_t channels,
                                       cudaStream_t stream) {
  return launchOver(channels * w.kernel[0] * w.kernel[1] * w.outHeight *
                        w.outWidth,
                    stream, im2colKernel, image, columns, w, channels);
}

cudaError_t parcrt::cuda::launchCol2im(const float *columns, float *image,
                                       const Window2d &w, int64_t channels,
                                       cudaStream_t stream) {
  return launchOver(channels * w.height * w.width, stream, col2imKernel,
                    columns, image, w, channels);
}

cudaError_t parcrt::cuda::launchMaxPool2d(const TensorRef *t, const Window2d &w,
                                          cudaStream_t stream) {
  int64_t planes = planesOf(t[0]);
  return launchOver(planes * w.outHeight * w.outWidth, stream, maxPoolKernel,
                    floats(t[0]), floats(t[1]), w, planes);
}

cudaError_t parcrt::cuda::launchMaxPool2dGrad(const TensorRef *t,
                                              const Window2d &w,
                                              cudaStream_t stream) {
  int64_t planes = planesOf(t[0]);
  return launchOver(planes * w.height * w.width, stream, maxPoolGradKernel,
                    floats(t[0]), floats(t[1]), floats(t[2]), w, planes);
}

cudaError_t parcrt::cuda::launchAvgPool2d(const TensorRef *t, const Window2d &w,
                                          bool countIncludePad,
                                          cudaStream_t stream) {
  int64_t planes = planesOf(t[0]);
  return launchOver(planes * w.outHeight * w.outWidth, stream, avgPoolKernel,
                    floats(t[0]), floats(t[1]), w, planes, countIncludePad);
}

cudaError_t parcrt::cuda::launchAvgPool2dGrad(const TensorRef *t,
                                              const Window2d &w,
                                              bool countIncludePad,
                                              cudaStream_t stream) {
  int64_t planes = planesOf(t[1]);
  return launchOver(planes * w.height * w.width, stream, avgPoolGradKernel,
                    floats(t[0]), floats(t[1]), w, planes, countIncludePad);
}
