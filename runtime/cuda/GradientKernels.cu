//===- GradientKernels.cu - gradient and optimizer kernels ----------------===//
//
// The cuda backend's kernels for the ops autodiff and the optimizers emit,
// reproducing lib/Interp/GradientKernels.cpp and OptimizerKernels.cpp in
// f32. Written for correctness first, like Kernels.cu: reductions over a
// row run one block per row; reductions over rows (dgamma, dbeta)
// run one thread (or block) per output and write it directly, so results
// are deterministic and need no zeroing; only embedding_grad scatter-adds
// with atomics, into a result it zeroes first.
//
// The layout gradients (broadcast_to, slice_grad) live in Kernels.cu next
// to the gather they reuse.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"
#include "Kernels.h"
#include "core/ElementMath.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

using namespace parcrt;
using namespace parcrt::cuda;

namespace {

#include "DeviceCommon.cuh"

/// One block per row: rows must fit gridDim.x.
bool fitsGrid(int64_t rows) { return rows <= (int64_t(1) << 31) - 1; }

//===----------------------------------------------------------------------===//
// Activations and softmax
//===----------------------------------------------------------------------===//

/// g times the derivative of activation `kind` (a Backend::Activation).
__global__ void activationGradKernel(int kind, const float *x, const float *g,
                                     float *out, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    out[i] = g[i] * math::activationDerivative<float>(
                        static_cast<Backend::Activation>(kind), x[i]);
  }
}

/// One block per line of `length` elements along an axis of stride `inner`.
__global__ void softmaxGradKernel(const float *y, const float *g, float *out,
                                  int64_t length, int64_t inner) {
  int64_t line = blockIdx.x;
  int64_t base = (line / inner) * length * inner + line % inner;
  float partial = 0.0f;
  for (int64_t n = threadIdx.x; n < length; n += blockDim.x)
    partial += y[base + n * inner] * g[base + n * inner];
  float total = blockReduce<false>(partial);
  for (int64_t n = threadIdx.x; n < length; n += blockDim.x) {
    int64_t at = base + n * inner;
    out[at] = y[at] * (g[at] - total);
  }
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// One block per row of layer_norm: dx, and the row's mean and 1/std in
/// stats[2 row], stats[2 row + 1] for the column kernel.
__global__ void layerNormGradRowKernel(const float *x, const float *gamma,
                                       const float *g, float *dx, float *stats,
                                       int64_t features, float epsilon) {
  const float *in = x + blockIdx.x * features;
  const float *grad = g + blockIdx.x * features;
  float *out = dx + blockIdx.x * features;
  float sum = 0.0f;
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x)
    sum += in[n];
  float mean = blockReduce<false>(sum) / features;
  float squares = 0.0f;
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x) {
    float centered = in[n] - mean;
    squares += centered * centered;
  }
  float variance = blockReduce<false>(squares) / features;
  float rstd = 1.0f / sqrtf(variance + epsilon);
  float sumDxhat = 0.0f, sumDxhatXhat = 0.0f;
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x) {
    float xhat = (in[n] - mean) * rstd;
    float dxhat = grad[n] * gamma[n];
    sumDxhat += dxhat;
    sumDxhatXhat += dxhat * xhat;
  }
  float meanDxhat = blockReduce<false>(sumDxhat) / features;
  float meanDxhatXhat = blockReduce<false>(sumDxhatXhat) / features;
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x) {
    float xhat = (in[n] - mean) * rstd;
    float dxhat = grad[n] * gamma[n];
    out[n] = rstd * (dxhat - meanDxhat - xhat * meanDxhatXhat);
  }
  if (threadIdx.x == 0) {
    stats[2 * blockIdx.x] = mean;
    stats[2 * blockIdx.x + 1] = rstd;
  }
}

/// One block per row of rms_norm: dx, and stats[2 row] = 0, stats[2 row +
/// 1] = 1/rms.
__global__ void rmsNormGradRowKernel(const float *x, const float *gamma,
                                     const float *g, float *dx, float *stats,
                                     int64_t features, float epsilon) {
  const float *in = x + blockIdx.x * features;
  const float *grad = g + blockIdx.x * features;
  float *out = dx + blockIdx.x * features;
  float squares = 0.0f, partialDot = 0.0f;
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x) {
    squares += in[n] * in[n];
    partialDot += grad[n] * gamma[n] * in[n];
  }
  float meanSquare = blockReduce<false>(squares) / features;
  float total = blockReduce<false>(partialDot);
  float r = 1.0f / sqrtf(meanSquare + epsilon);
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x)
    out[n] = r * grad[n] * gamma[n] - in[n] * r * r * r * total / features;
  if (threadIdx.x == 0) {
    stats[2 * blockIdx.x] = 0.0f;
    stats[2 * blockIdx.x + 1] = r;
  }
}

/// One thread per feature n: dgamma[n] = sum_rows g * (x - mean) * scale,
/// dbeta[n] = sum_rows g (dbeta may be null). Zero rows give zeros.
__global__ void normParamGradKernel(const float *x, const float *g,
                                    const float *stats, float *dgamma,
                                    float *dbeta, int64_t rows,
                                    int64_t features) {
  GRID_STRIDE_LOOP(n, features) {
    float sumGamma = 0.0f, sumBeta = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      float grad = g[r * features + n];
      float xhat = (x[r * features + n] - stats[2 * r]) * stats[2 * r + 1];
      sumGamma += grad * xhat;
      sumBeta += grad;
    }
    dgamma[n] = sumGamma;
    if (dbeta)
      dbeta[n] = sumBeta;
  }
}

cudaError_t launchNormGrad(const TensorRef *t, double epsilon, float *stats,
                           bool center, cudaStream_t stream) {
  const TensorRef &x = t[0];
  int64_t features = x.rank ? x.shape[x.rank - 1] : 1;
  if (features == 0)
    return cudaSuccess;
  int64_t rows = countOf(x) / features;
  if (!fitsGrid(rows))
    return cudaErrorInvalidConfiguration;
  const float *in = static_cast<const float *>(x.data);
  const float *gamma = static_cast<const float *>(t[1].data);
  const float *g = static_cast<const float *>(t[2].data);
  float *dx = static_cast<float *>(t[3].data);
  if (rows > 0) {
    if (center)
      layerNormGradRowKernel<<<static_cast<unsigned>(rows), kThreads, 0,
                               stream>>>(in, gamma, g, dx, stats, features,
                                         static_cast<float>(epsilon));
    else
      rmsNormGradRowKernel<<<static_cast<unsigned>(rows), kThreads, 0,
                             stream>>>(in, gamma, g, dx, stats, features,
                                       static_cast<float>(epsilon));
    cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess)
      return status;
  }
  normParamGradKernel<<<gridFor(features), kThreads, 0, stream>>>(
      in, g, stats, static_cast<float *>(t[4].data),
      center ? static_cast<float *>(t[5].data) : nullptr, rows, features);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Embedding
//===----------------------------------------------------------------------===//

__global__ void embeddingGradKernel(const void *ids, int idType,
                                    const void *shard, int shardType,
                                    const float *g, float *table, int64_t vocab,
                                    int64_t dim, int64_t n, int *errors) {
  int64_t offset = shard ? loadIndex(shard, shardType, 0) * vocab : 0;
  GRID_STRIDE_LOOP(i, n) {
    int64_t id = loadIndex(ids, idType, i / dim) - offset;
    if (id >= 0 && id < vocab)
      atomicAdd(&table[id * dim + i % dim], g[i]);
    else if (!shard && i % dim == 0)
      atomicOr(errors, kEmbeddingGradIdError);
  }
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

/// One block per position: (softmax(x) - onehot(label)) * g / count.
// With a shard, the logits are one block of the classes and `normalizer`
// holds each row's global log-sum-exp.
__global__ void crossEntropyGradKernel(const float *logits, const void *labels,
                                       int labelType, const float *g,
                                       const float *normalizer,
                                       const void *shard, int shardType,
                                       float count, float *out, int64_t classes,
                                       int *errors) {
  const float *x = logits + blockIdx.x * classes;
  float *y = out + blockIdx.x * classes;
  float shift, sum = 1.0f;
  if (shard) {
    shift = normalizer[blockIdx.x];
  } else {
    shift = -INFINITY;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
      shift = fmaxf(shift, x[c]);
    shift = blockReduce<true>(shift);
    sum = 0.0f;
    for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
      sum += expf(x[c] - shift);
    sum = blockReduce<false>(sum);
  }
  int64_t offset = shard ? loadIndex(shard, shardType, 0) * classes : 0;
  int64_t label = loadIndex(labels, labelType, blockIdx.x) - offset;
  bool valid = shard || (label >= 0 && label < classes);
  if (!valid && threadIdx.x == 0)
    atomicOr(errors, kCrossEntropyGradLabelError);
  float scale = *g / count;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    y[c] = valid
               ? (expf(x[c] - shift) / sum - (c == label ? 1.0f : 0.0f)) * scale
               : NAN;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Whether an update's `skip` scalar (null when the update has none) is
/// set: nonzero, NaN included.
__device__ bool isSkipped(const float *skip) { return skip && *skip != 0; }

__global__ void adamwKernel(const float *param, const float *grad,
                            const float *m, const float *v, const float *step,
                            const float *skip, float *paramOut, float *mOut,
                            float *vOut, int64_t n, double lr, double beta1,
                            double beta2, double epsilon, double weightDecay) {
  if (isSkipped(skip)) {
    GRID_STRIDE_LOOP(i, n) {
      paramOut[i] = param[i];
      mOut[i] = m[i];
      vOut[i] = v[i];
    }
    return;
  }
  math::AdamWStep<float> constants =
      math::adamwStep<float>(lr, beta1, beta2, epsilon, weightDecay, *step);
  GRID_STRIDE_LOOP(i, n) {
    math::AdamWElement<float> next =
        math::adamwElement<float>(param[i], grad[i], m[i], v[i], constants);
    paramOut[i] = next.param;
    mOut[i] = next.firstMoment;
    vOut[i] = next.secondMoment;
  }
}

__global__ void sgdKernel(const float *param, const float *grad,
                          const float *buffer, const float *skip,
                          float *paramOut, float *bufferOut, int64_t n,
                          float lr, float momentum) {
  if (isSkipped(skip)) {
    GRID_STRIDE_LOOP(i, n) {
      paramOut[i] = param[i];
      bufferOut[i] = buffer[i];
    }
    return;
  }
  GRID_STRIDE_LOOP(i, n) {
    math::SgdElement<float> next =
        math::sgdElement<float>(param[i], grad[i], buffer[i], lr, momentum);
    paramOut[i] = next.param;
    bufferOut[i] = next.buffer;
  }
}

__global__ void clipCoefficientKernel(const float *sum, float *out,
                                      double maxNorm) {
  double norm = sqrt(static_cast<double>(*sum));
  *out = static_cast<float>(fmin(1.0, maxNorm / (norm + 1e-6)));
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

cudaError_t parcrt::cuda::launchActivationGrad(Backend::Activation kind,
                                               const TensorRef *t,
                                               cudaStream_t stream) {
  int64_t n = countOf(t[2]);
  if (n == 0)
    return cudaSuccess;
  activationGradKernel<<<gridFor(n), kThreads, 0, stream>>>(
      static_cast<int>(kind), static_cast<const float *>(t[0].data),
      static_cast<const float *>(t[1].data), static_cast<float *>(t[2].data),
      n);
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchSoftmaxGrad(const TensorRef *t, int64_t axis,
                                            cudaStream_t stream) {
  int64_t length = t[0].shape[axis], inner = 1;
  for (int d = axis + 1; d < t[0].rank; ++d)
    inner *= t[0].shape[d];
  int64_t lines = length ? countOf(t[0]) / length : 0;
  if (lines == 0)
    return cudaSuccess;
  if (!fitsGrid(lines))
    return cudaErrorInvalidConfiguration;
  softmaxGradKernel<<<static_cast<unsigned>(lines), kThreads, 0, stream>>>(
      static_cast<const float *>(t[0].data),
      static_cast<const float *>(t[1].data), static_cast<float *>(t[2].data),
      length, inner);
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchLayerNormGrad(const TensorRef *t,
                                              double epsilon, float *scratch,
                                              cudaStream_t stream) {
  return launchNormGrad(t, epsilon, scratch, /*center=*/true, stream);
}

cudaError_t parcrt::cuda::launchRmsNormGrad(const TensorRef *t, double epsilon,
                                            float *scratch,
                                            cudaStream_t stream) {
  return launchNormGrad(t, epsilon, scratch, /*center=*/false, stream);
}

cudaError_t parcrt::cuda::launchEmbeddingGrad(const TensorRef *t,
                                              bool hasShard, int *errors,
                                              cudaStream_t stream) {
  const TensorRef &ids = t[0], &g = t[1];
  const TensorRef &table = t[hasShard ? 3 : 2];
  int64_t vocab = table.shape[0], dim = table.shape[1];
  int64_t total = countOf(table);
  if (total == 0)
    return cudaSuccess;
  cudaError_t status =
      cudaMemsetAsync(table.data, 0, total * sizeof(float), stream);
  int64_t n = countOf(ids) * dim;
  if (status != cudaSuccess || n == 0)
    return status;
  embeddingGradKernel<<<gridFor(n), kThreads, 0, stream>>>(
      ids.data, ids.dtype, hasShard ? t[2].data : nullptr,
      hasShard ? t[2].dtype : PARCRT_I64, static_cast<const float *>(g.data),
      static_cast<float *>(table.data), vocab, dim, n, errors);
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchCrossEntropyGrad(const TensorRef *t,
                                                 int64_t count, bool hasShard,
                                                 int *errors,
                                                 cudaStream_t stream) {
  const TensorRef &logits = t[0], &labels = t[1];
  int64_t classes = logits.rank ? logits.shape[logits.rank - 1] : 1;
  int64_t rows = countOf(labels);
  if (rows == 0 || classes == 0)
    return cudaSuccess;
  if (!fitsGrid(rows))
    return cudaErrorInvalidConfiguration;
  crossEntropyGradKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<const float *>(logits.data), labels.data, labels.dtype,
      static_cast<const float *>(t[2].data),
      hasShard ? static_cast<const float *>(t[3].data) : nullptr,
      hasShard ? t[4].data : nullptr, hasShard ? t[4].dtype : PARCRT_I64,
      static_cast<float>(count), static_cast<float *>(t[hasShard ? 5 : 3].data),
      classes, errors);
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchAdamwUpdate(const TensorRef *t, bool skippable,
                                            double lr, double beta1,
                                            double beta2, double epsilon,
                                            double weightDecay,
                                            cudaStream_t stream) {
  int64_t n = countOf(t[0]);
  if (n == 0)
    return cudaSuccess;
  const TensorRef *out = t + (skippable ? 6 : 5);
  adamwKernel<<<gridFor(n), kThreads, 0, stream>>>(
      static_cast<const float *>(t[0].data),
      static_cast<const float *>(t[1].data),
      static_cast<const float *>(t[2].data),
      static_cast<const float *>(t[3].data),
      static_cast<const float *>(t[4].data),
      skippable ? static_cast<const float *>(t[5].data) : nullptr,
      static_cast<float *>(out[0].data), static_cast<float *>(out[1].data),
      static_cast<float *>(out[2].data), n, lr, beta1, beta2, epsilon,
      weightDecay);
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchSgdUpdate(const TensorRef *t, bool skippable,
                                          double lr, double momentum,
                                          cudaStream_t stream) {
  int64_t n = countOf(t[0]);
  if (n == 0)
    return cudaSuccess;
  const TensorRef *out = t + (skippable ? 4 : 3);
  sgdKernel<<<gridFor(n), kThreads, 0, stream>>>(
      static_cast<const float *>(t[0].data),
      static_cast<const float *>(t[1].data),
      static_cast<const float *>(t[2].data),
      skippable ? static_cast<const float *>(t[3].data) : nullptr,
      static_cast<float *>(out[0].data), static_cast<float *>(out[1].data), n,
      static_cast<float>(lr), static_cast<float>(momentum));
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchClipCoefficient(const TensorRef *t,
                                                double maxNorm,
                                                cudaStream_t stream) {
  clipCoefficientKernel<<<1, 1, 0, stream>>>(
      static_cast<const float *>(t[0].data), static_cast<float *>(t[1].data),
      maxNorm);
  return cudaGetLastError();
}
