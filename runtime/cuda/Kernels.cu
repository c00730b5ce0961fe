//===- Kernels.cu - CUDA kernels of the cuda backend ----------------------===//
//
// One kernel per op family, written for correctness first: every kernel
// reproduces the reference evaluator's semantics (lib/Interp/*Kernels.cpp)
// in f32. Index arithmetic is 64-bit; 1-D kernels use grid-stride loops.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"
#include "Kernels.h"
#include "core/ElementMath.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

using namespace parcrt;
using namespace parcrt::cuda;

namespace {

#include "DeviceCommon.cuh"

constexpr int kMaxRank = PARCRT_MAX_RANK;

/// Row-major strides of `shape`.
void rowMajorStrides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
}


/// Maps a linear index over `shape` to an offset through `strides`.
struct IndexMap {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};

  __device__ int64_t offset(int64_t linear) const {
    int64_t result = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t size = shape[d];
      result += (linear % size) * strides[d];
      linear /= size;
    }
    return result;
  }
};

/// Calls `launch.template operator()<Word>()` with an unsigned `Word` of
/// `elementBytes` bytes, to move elements of any dtype.
template <typename Launch>
cudaError_t dispatchBytes(size_t elementBytes, Launch launch) {
  switch (elementBytes) {
  case 1:
    return launch.template operator()<uint8_t>();
  case 2:
    return launch.template operator()<uint16_t>();
  case 4:
    return launch.template operator()<uint32_t>();
  case 8:
    return launch.template operator()<uint64_t>();
  default:
    return cudaErrorInvalidValue;
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename T> __device__ T applyBinary(char op, T a, T b) {
  switch (op) {
  case '+':
    return a + b;
  case '-':
    return a - b;
  case '*':
    return a * b;
  case '^':
    if constexpr (std::is_integral_v<T>)
      return T(pow(double(a), double(b)));
    else
      return powf(a, b);
  default:
    if constexpr (std::is_integral_v<T>)
      return b == 0 ? T(0) : a / b;
    else
      return a / b;
  }
}

template <typename T>
__global__ void binaryKernel(char op, const T *lhs, const T *rhs, T *out,
                             int64_t n, IndexMap lhsMap, IndexMap rhsMap) {
  GRID_STRIDE_LOOP(i, n) {
    out[i] = applyBinary<T>(op, lhs[lhsMap.offset(i)], rhs[rhsMap.offset(i)]);
  }
}

template <typename T>
__global__ void binarySameShapeKernel(char op, const T *lhs, const T *rhs,
                                      T *out, int64_t n) {
  GRID_STRIDE_LOOP(i, n) { out[i] = applyBinary<T>(op, lhs[i], rhs[i]); }
}

/// The strides of `operand` in `result`'s index space (0 where broadcast).
IndexMap broadcastMap(const TensorRef &operand, const TensorRef &result) {
  IndexMap map;
  map.rank = result.rank;
  int64_t own[kMaxRank];
  rowMajorStrides(operand.rank, operand.shape, own);
  int offset = result.rank - operand.rank;
  for (int d = 0; d < result.rank; ++d) {
    map.shape[d] = result.shape[d];
    map.strides[d] = 0;
  }
  for (int d = 0; d < operand.rank; ++d)
    if (operand.shape[d] != 1)
      map.strides[offset + d] = own[d];
  return map;
}

template <typename T>
cudaError_t binaryTyped(char op, const TensorRef *t, cudaStream_t stream) {
  int64_t n = countOf(t[2]);
  if (n == 0)
    return cudaSuccess;
  const T *lhs = static_cast<const T *>(t[0].data);
  const T *rhs = static_cast<const T *>(t[1].data);
  T *out = static_cast<T *>(t[2].data);
  if (countOf(t[0]) == n && countOf(t[1]) == n)
    binarySameShapeKernel<T>
        <<<gridFor(n), kThreads, 0, stream>>>(op, lhs, rhs, out, n);
  else
    binaryKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        op, lhs, rhs, out, n, broadcastMap(t[0], t[2]),
        broadcastMap(t[1], t[2]));
  return cudaGetLastError();
}

template <Backend::Unary Op> __device__ float applyUnary(float x) {
  using U = Backend::Unary;
  if constexpr (Op == U::Neg)
    return -x;
  else if constexpr (Op == U::Exp)
    return expf(x);
  else if constexpr (Op == U::Log)
    return logf(x);
  else if constexpr (Op == U::Tanh)
    return tanhf(x);
  else if constexpr (Op == U::Relu)
    return x < 0.0f ? 0.0f : x; // NaN stays NaN, as in PyTorch
  else if constexpr (Op == U::Sigmoid)
    return 1.0f / (1.0f + expf(-x));
  else if constexpr (Op == U::Silu)
    return x / (1.0f + expf(-x));
  else if constexpr (Op == U::Sqrt)
    return sqrtf(x);
  else if constexpr (Op == U::Erf)
    return erff(x);
  else if constexpr (Op == U::GeluErf)
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  else // GeluTanh
    return 0.5f * x *
           (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

template <Backend::Unary Op>
__global__ void unaryKernel(const float *in, float *out, int64_t n) {
  GRID_STRIDE_LOOP(i, n) { out[i] = applyUnary<Op>(in[i]); }
}

template <Backend::Unary Op>
cudaError_t unaryTyped(const TensorRef *t, cudaStream_t stream) {
  int64_t n = countOf(t[1]);
  if (n == 0)
    return cudaSuccess;
  unaryKernel<Op><<<gridFor(n), kThreads, 0, stream>>>(
      static_cast<const float *>(t[0].data), static_cast<float *>(t[1].data),
      n);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// One block per line of `length` elements along an axis of stride `inner`.
__global__ void softmaxKernel(const float *in, float *out, int64_t length,
                              int64_t inner) {
  int64_t line = blockIdx.x;
  int64_t base = (line / inner) * length * inner + line % inner;
  const float *x = in + base;
  float *y = out + base;
  float maxValue = -INFINITY;
  for (int64_t n = threadIdx.x; n < length; n += blockDim.x)
    maxValue = fmaxf(maxValue, x[n * inner]);
  maxValue = blockReduce<true>(maxValue);
  // A line of -inf (every key masked) is all zeros, not NaN (uniform over
  // the block).
  if (maxValue == -INFINITY) {
    for (int64_t n = threadIdx.x; n < length; n += blockDim.x)
      y[n * inner] = 0.0f;
    return;
  }
  float total = 0.0f;
  for (int64_t n = threadIdx.x; n < length; n += blockDim.x) {
    float e = expf(x[n * inner] - maxValue);
    y[n * inner] = e;
    total += e;
  }
  total = blockReduce<false>(total);
  for (int64_t n = threadIdx.x; n < length; n += blockDim.x)
    y[n * inner] /= total;
}

/// One block per row; two passes (mean, then variance). `beta` may be null
/// and `center` false for rms_norm.
__global__ void normKernel(const float *in, const float *gamma,
                           const float *beta, float *out, int64_t features,
                           float epsilon, bool center) {
  const float *x = in + blockIdx.x * features;
  float *y = out + blockIdx.x * features;
  float mean = 0.0f;
  if (center) {
    float sum = 0.0f;
    for (int64_t n = threadIdx.x; n < features; n += blockDim.x)
      sum += x[n];
    mean = blockReduce<false>(sum) / features;
  }
  float squares = 0.0f;
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x) {
    float centered = x[n] - mean;
    squares += centered * centered;
  }
  float variance = blockReduce<false>(squares) / features;
  float scale = 1.0f / sqrtf(variance + epsilon);
  for (int64_t n = threadIdx.x; n < features; n += blockDim.x) {
    float value = (x[n] - mean) * scale * gamma[n];
    y[n] = beta ? value + beta[n] : value;
  }
}

cudaError_t launchNorm(const TensorRef &x, const float *gamma,
                       const float *beta, const TensorRef &result,
                       double epsilon, bool center, cudaStream_t stream) {
  int64_t features = x.rank ? x.shape[x.rank - 1] : 1;
  int64_t rows = features ? countOf(x) / features : 0;
  if (rows == 0)
    return cudaSuccess;
  normKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
      static_cast<const float *>(x.data), gamma, beta,
      static_cast<float *>(result.data), features, static_cast<float>(epsilon),
      center);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Lookups
//===----------------------------------------------------------------------===//

/// The offset a shard index adds to ids (0 without one).
__device__ int64_t shardOffset(const void *shard, int shardType,
                               int64_t blockSize) {
  return shard ? loadIndex(shard, shardType, 0) * blockSize : 0;
}

/// Records an out-of-range index in `errors` (bit `code`).
__device__ void reportIndexError(int *errors, int code) {
  atomicOr(errors, code);
}

template <typename T>
__global__ void embeddingKernel(const T *table, const void *ids, int idType,
                                const void *shard, int shardType, T *out,
                                int64_t vocab, int64_t dim, int64_t n,
                                int *errors) {
  int64_t offset = shardOffset(shard, shardType, vocab);
  GRID_STRIDE_LOOP(i, n) {
    int64_t id = loadIndex(ids, idType, i / dim) - offset;
    if (id >= 0 && id < vocab) {
      out[i] = table[id * dim + i % dim];
    } else {
      out[i] = T(0);
      if (!shard && i % dim == 0)
        reportIndexError(errors, kEmbeddingIdError);
    }
  }
}

template <typename T>
__global__ void takeKernel(const T *input, const void *indices, int indexType,
                           const void *shard, int shardType, T *out,
                           int64_t classes, int64_t n, int *errors) {
  int64_t offset = shardOffset(shard, shardType, classes);
  GRID_STRIDE_LOOP(i, n) {
    int64_t index = loadIndex(indices, indexType, i) - offset;
    if (index >= 0 && index < classes) {
      out[i] = input[i * classes + index];
    } else {
      out[i] = T(0);
      if (!shard)
        reportIndexError(errors, kTakeIndexError);
    }
  }
}

struct LookupArgs {
  const void *source, *indices, *shard;
  void *out;
  int indexType, shardType;
  int64_t rows, rowLength, n;
  int *errors;
  bool embedding;
  cudaStream_t stream;

  template <typename T> cudaError_t operator()() const {
    if (embedding)
      embeddingKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
          static_cast<const T *>(source), indices, indexType, shard, shardType,
          static_cast<T *>(out), rows, rowLength, n, errors);
    else
      takeKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
          static_cast<const T *>(source), indices, indexType, shard, shardType,
          static_cast<T *>(out), rowLength, n, errors);
    return cudaGetLastError();
  }
};

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

/// One block per position: logsumexp(x) - x[label].
__global__ void crossEntropyRowKernel(const float *logits, const void *labels,
                                      int labelType, float *losses,
                                      int64_t classes, int *errors) {
  const float *x = logits + blockIdx.x * classes;
  float maxValue = -INFINITY;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    maxValue = fmaxf(maxValue, x[c]);
  maxValue = blockReduce<true>(maxValue);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    sum += expf(x[c] - maxValue);
  sum = blockReduce<false>(sum);
  if (threadIdx.x == 0) {
    int64_t label = loadIndex(labels, labelType, blockIdx.x);
    if (label >= 0 && label < classes) {
      losses[blockIdx.x] = maxValue + logf(sum) - x[label];
    } else {
      losses[blockIdx.x] = NAN;
      atomicOr(errors, kCrossEntropyLabelError);
    }
  }
}

/// One block: the mean of `count` values (0 when there are none).
__global__ void meanKernel(const float *values, int64_t count, float *out) {
  float sum = 0.0f;
  for (int64_t n = threadIdx.x; n < count; n += blockDim.x)
    sum += values[n];
  sum = blockReduce<false>(sum);
  if (threadIdx.x == 0)
    // The mean of nothing is NaN, as in PyTorch.
    *out = count > 0 ? sum / count : nanf("");
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void gatherKernel(T *dst, const T *src, int64_t n, IndexMap map,
                             int64_t base) {
  GRID_STRIDE_LOOP(i, n) { dst[i] = src[base + map.offset(i)]; }
}

template <typename T>
__global__ void copy2DKernel(T *dst, int64_t dstPitch, const T *src,
                             int64_t srcPitch, int64_t width, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    int64_t r = i / width, x = i % width;
    dst[r * dstPitch + x] = src[r * srcPitch + x];
  }
}

struct GatherLaunch {
  void *dst;
  const void *src;
  const IndexMap &map;
  int64_t base, n;
  cudaStream_t stream;
  template <typename T> cudaError_t operator()() const {
    gatherKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        static_cast<T *>(dst), static_cast<const T *>(src), n, map, base);
    return cudaGetLastError();
  }
};

struct Copy2DLaunch {
  void *dst;
  int64_t dstPitch;
  const void *src;
  int64_t srcPitch, width, n;
  cudaStream_t stream;
  template <typename T> cudaError_t operator()() const {
    copy2DKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        static_cast<T *>(dst), dstPitch, static_cast<const T *>(src), srcPitch,
        width, n);
    return cudaGetLastError();
  }
};

template <typename T>
__global__ void scatterKernel(T *dst, const T *src, int64_t n, IndexMap map,
                              int64_t base) {
  GRID_STRIDE_LOOP(i, n) { dst[base + map.offset(i)] = src[i]; }
}

struct ScatterLaunch {
  void *dst;
  const void *src;
  const IndexMap &map;
  int64_t base, n;
  cudaStream_t stream;
  template <typename T> cudaError_t operator()() const {
    scatterKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
        static_cast<T *>(dst), static_cast<const T *>(src), n, map, base);
    return cudaGetLastError();
  }
};

/// dst[i] = src[base + map.offset(i)] for every element of map's shape.
cudaError_t launchGather(void *dst, const void *src, size_t elementBytes,
                         const IndexMap &map, int64_t base,
                         cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < map.rank; ++d)
    n *= map.shape[d];
  if (n == 0)
    return cudaSuccess;
  return dispatchBytes(elementBytes,
                       GatherLaunch{dst, src, map, base, n, stream});
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

struct ReduceArgs {
  IndexMap kept;    // output index -> input offset
  IndexMap reduced; // reduced index -> input offset
  int64_t outputs, count;
};

/// Folds one output's line of the input, from reduced index `first` on in
/// steps of `step`: a sum or a maximum, or for a log-sum-exp the sum of
/// exp(x - shift).
template <Backend::Reduce Op>
__device__ float reduceLine(const float *in, const ReduceArgs &args,
                            int64_t base, int64_t first, int64_t step,
                            float shift = 0.0f) {
  constexpr bool max = Op == Backend::Reduce::Max;
  float acc = max ? -INFINITY : 0.0f;
  for (int64_t r = first; r < args.count; r += step) {
    float x = in[base + args.reduced.offset(r)];
    if constexpr (max)
      acc = fmaxf(acc, x);
    else if constexpr (Op == Backend::Reduce::LogSumExp)
      acc += expf(x - shift);
    else
      acc += x;
  }
  return acc;
}

/// The result from the line's fold (and for a log-sum-exp, its maximum;
/// a line whose maximum is infinite yields that maximum).
template <Backend::Reduce Op>
__device__ float finishReduce(float acc, int64_t count, float shift) {
  if constexpr (Op == Backend::Reduce::Mean)
    return acc / count;
  else if constexpr (Op == Backend::Reduce::LogSumExp)
    return isfinite(shift) ? shift + logf(acc) : shift;
  else
    return acc;
}

/// One thread per output: for short reductions.
template <Backend::Reduce Op>
__global__ void reduceThreadKernel(const float *in, float *out,
                                   ReduceArgs args) {
  GRID_STRIDE_LOOP(o, args.outputs) {
    int64_t base = args.kept.offset(o);
    float shift = 0.0f;
    if constexpr (Op == Backend::Reduce::LogSumExp)
      shift = reduceLine<Backend::Reduce::Max>(in, args, base, 0, 1);
    out[o] = finishReduce<Op>(reduceLine<Op>(in, args, base, 0, 1, shift),
                              args.count, shift);
  }
}

/// One block per output: for long reductions.
template <Backend::Reduce Op>
__global__ void reduceBlockKernel(const float *in, float *out,
                                  ReduceArgs args) {
  int64_t base = args.kept.offset(blockIdx.x);
  float shift = 0.0f;
  if constexpr (Op == Backend::Reduce::LogSumExp)
    shift = blockReduce<true>(reduceLine<Backend::Reduce::Max>(
        in, args, base, threadIdx.x, blockDim.x));
  float acc = reduceLine<Op>(in, args, base, threadIdx.x, blockDim.x, shift);
  acc = blockReduce<Op == Backend::Reduce::Max>(acc);
  if (threadIdx.x == 0)
    out[blockIdx.x] = finishReduce<Op>(acc, args.count, shift);
}

template <Backend::Reduce Op>
cudaError_t reduceTyped(const TensorRef *t, const ReduceArgs &args,
                        cudaStream_t stream) {
  const float *in = static_cast<const float *>(t[0].data);
  float *out = static_cast<float *>(t[1].data);
  if (args.count >= 64 && args.outputs <= (int64_t(1) << 31) - 1)
    reduceBlockKernel<Op>
        <<<static_cast<unsigned>(args.outputs), kThreads, 0, stream>>>(in, out,
                                                                       args);
  else
    reduceThreadKernel<Op>
        <<<gridFor(args.outputs), kThreads, 0, stream>>>(in, out, args);
  return cudaGetLastError();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

template <typename T> __device__ T fromDouble(double v) {
  // f16 and bf16 round through f32, as the cpu backend does.
  if constexpr (std::is_same_v<T, __half>)
    return __float2half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <typename T>
__global__ void fillKernel(T *dst, int64_t n, const double *values,
                           double splat) {
  GRID_STRIDE_LOOP(i, n) { dst[i] = fromDouble<T>(values ? values[i] : splat); }
}

template <typename T>
cudaError_t fillTyped(void *dst, int64_t n, const double *values, double splat,
                      cudaStream_t stream) {
  fillKernel<T><<<gridFor(n), kThreads, 0, stream>>>(static_cast<T *>(dst), n,
                                                     values, splat);
  return cudaGetLastError();
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

cudaError_t parcrt::cuda::launchBinary(char op, const TensorRef *t,
                                       cudaStream_t stream) {
  switch (t[2].dtype) {
  case PARCRT_F32:
    return binaryTyped<float>(op, t, stream);
  case PARCRT_I32:
    return binaryTyped<int32_t>(op, t, stream);
  case PARCRT_I64:
    return binaryTyped<int64_t>(op, t, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t parcrt::cuda::launchUnary(Backend::Unary op, const TensorRef *t,
                                      cudaStream_t stream) {
  using U = Backend::Unary;
  switch (op) {
  case U::Neg:
    return unaryTyped<U::Neg>(t, stream);
  case U::Exp:
    return unaryTyped<U::Exp>(t, stream);
  case U::Log:
    return unaryTyped<U::Log>(t, stream);
  case U::Tanh:
    return unaryTyped<U::Tanh>(t, stream);
  case U::Relu:
    return unaryTyped<U::Relu>(t, stream);
  case U::Sigmoid:
    return unaryTyped<U::Sigmoid>(t, stream);
  case U::Silu:
    return unaryTyped<U::Silu>(t, stream);
  case U::GeluErf:
    return unaryTyped<U::GeluErf>(t, stream);
  case U::GeluTanh:
    return unaryTyped<U::GeluTanh>(t, stream);
  case U::Sqrt:
    return unaryTyped<U::Sqrt>(t, stream);
  case U::Erf:
    return unaryTyped<U::Erf>(t, stream);
  }
  return cudaErrorInvalidValue;
}

/// 16-bit floats convert through f32 (to nearest even); the rest by
/// static_cast (float to integer truncates toward zero).
template <typename To, typename From> __device__ To convertTo(From value) {
  if constexpr (std::is_same_v<From, __nv_bfloat16> ||
                std::is_same_v<From, __half>)
    return convertTo<To>(static_cast<float>(value));
  else if constexpr (std::is_same_v<To, __nv_bfloat16>)
    return __float2bfloat16_rn(static_cast<float>(value));
  else if constexpr (std::is_same_v<To, __half>)
    return __float2half_rn(static_cast<float>(value));
  else
    return static_cast<To>(value);
}

template <typename From, typename To>
__global__ void castKernel(const From *in, To *out, int64_t n) {
  GRID_STRIDE_LOOP(i, n) { out[i] = convertTo<To>(in[i]); }
}

template <typename From, typename To>
cudaError_t launchCastKernel(const TensorRef *t, int64_t n,
                             cudaStream_t stream) {
  castKernel<<<gridFor(n), kThreads, 0, stream>>>(
      static_cast<const From *>(t[0].data), static_cast<To *>(t[1].data), n);
  return cudaGetLastError();
}

template <typename From>
cudaError_t castFrom(const TensorRef *t, int64_t n, cudaStream_t stream) {
  switch (t[1].dtype) {
  case PARCRT_F32:
    return launchCastKernel<From, float>(t, n, stream);
  case PARCRT_F16:
    return launchCastKernel<From, __half>(t, n, stream);
  case PARCRT_BF16:
    return launchCastKernel<From, __nv_bfloat16>(t, n, stream);
  case PARCRT_I32:
    return launchCastKernel<From, int32_t>(t, n, stream);
  case PARCRT_I64:
    return launchCastKernel<From, int64_t>(t, n, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t parcrt::cuda::launchCast(const TensorRef *t, cudaStream_t stream) {
  int64_t n = countOf(t[1]);
  if (n == 0)
    return cudaSuccess;
  switch (t[0].dtype) {
  case PARCRT_F32:
    return castFrom<float>(t, n, stream);
  case PARCRT_F16:
    return castFrom<__half>(t, n, stream);
  case PARCRT_BF16:
    return castFrom<__nv_bfloat16>(t, n, stream);
  case PARCRT_I32:
    return castFrom<int32_t>(t, n, stream);
  case PARCRT_I64:
    return castFrom<int64_t>(t, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

template <typename Condition, typename Word>
__global__ void selectKernel(const Condition *condition, const Word *onTrue,
                             const Word *onFalse, Word *out, int64_t n,
                             IndexMap conditionMap, IndexMap onTrueMap,
                             IndexMap onFalseMap) {
  GRID_STRIDE_LOOP(i, n) {
    out[i] = condition[conditionMap.offset(i)] != 0
                 ? onTrue[onTrueMap.offset(i)]
                 : onFalse[onFalseMap.offset(i)];
  }
}

template <typename Condition> struct SelectLaunch {
  const TensorRef *t;
  int64_t n;
  cudaStream_t stream;
  template <typename Word> cudaError_t operator()() const {
    selectKernel<Condition, Word><<<gridFor(n), kThreads, 0, stream>>>(
        static_cast<const Condition *>(t[0].data),
        static_cast<const Word *>(t[1].data),
        static_cast<const Word *>(t[2].data), static_cast<Word *>(t[3].data),
        n, broadcastMap(t[0], t[3]), broadcastMap(t[1], t[3]),
        broadcastMap(t[2], t[3]));
    return cudaGetLastError();
  }
};

cudaError_t parcrt::cuda::launchSelect(const TensorRef *t,
                                       cudaStream_t stream) {
  int64_t n = countOf(t[3]);
  if (n == 0)
    return cudaSuccess;
  size_t elementBytes = dtypeBytes(t[3].dtype);
  if (t[0].dtype == PARCRT_I32)
    return dispatchBytes(elementBytes, SelectLaunch<int32_t>{t, n, stream});
  if (t[0].dtype == PARCRT_I64)
    return dispatchBytes(elementBytes, SelectLaunch<int64_t>{t, n, stream});
  if (t[0].dtype == PARCRT_F32)
    return dispatchBytes(elementBytes, SelectLaunch<float>{t, n, stream});
  return cudaErrorInvalidValue;
}

template <typename T>
__global__ void compareKernel(Backend::Comparison predicate, const T *lhs,
                              const T *rhs, int32_t *out, int64_t n,
                              IndexMap lhsMap, IndexMap rhsMap) {
  GRID_STRIDE_LOOP(i, n) {
    out[i] =
        math::compare(predicate, lhs[lhsMap.offset(i)], rhs[rhsMap.offset(i)]);
  }
}

template <typename T>
static cudaError_t compareAs(const TensorRef *t, Backend::Comparison predicate,
                             int64_t n, cudaStream_t stream) {
  compareKernel<T><<<gridFor(n), kThreads, 0, stream>>>(
      predicate, static_cast<const T *>(t[0].data),
      static_cast<const T *>(t[1].data), static_cast<int32_t *>(t[2].data), n,
      broadcastMap(t[0], t[2]), broadcastMap(t[1], t[2]));
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchCompare(const TensorRef *t,
                                        Backend::Comparison predicate,
                                        cudaStream_t stream) {
  int64_t n = countOf(t[2]);
  if (n == 0)
    return cudaSuccess;
  switch (t[0].dtype) {
  case PARCRT_F32:
    return compareAs<float>(t, predicate, n, stream);
  case PARCRT_I32:
    return compareAs<int32_t>(t, predicate, n, stream);
  case PARCRT_I64:
    return compareAs<int64_t>(t, predicate, n, stream);
  default:
    return cudaErrorInvalidValue;
  }
}

cudaError_t parcrt::cuda::launchSoftmax(const TensorRef *t, int64_t axis,
                                        cudaStream_t stream) {
  int64_t length = t[0].shape[axis], inner = 1;
  for (int d = axis + 1; d < t[0].rank; ++d)
    inner *= t[0].shape[d];
  int64_t lines = length ? countOf(t[0]) / length : 0;
  if (lines == 0)
    return cudaSuccess;
  softmaxKernel<<<static_cast<unsigned>(lines), kThreads, 0, stream>>>(
      static_cast<const float *>(t[0].data), static_cast<float *>(t[1].data),
      length, inner);
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchLayerNorm(const TensorRef *t, double epsilon,
                                          cudaStream_t stream) {
  return launchNorm(t[0], static_cast<const float *>(t[1].data),
                    static_cast<const float *>(t[2].data), t[3], epsilon,
                    /*center=*/true, stream);
}

cudaError_t parcrt::cuda::launchRmsNorm(const TensorRef *t, double epsilon,
                                        cudaStream_t stream) {
  return launchNorm(t[0], static_cast<const float *>(t[1].data), nullptr, t[2],
                    epsilon, /*center=*/false, stream);
}

cudaError_t parcrt::cuda::launchEmbedding(const TensorRef *t, bool hasShard,
                                          int *errors, cudaStream_t stream) {
  const TensorRef &table = t[0], &ids = t[1];
  const TensorRef &result = t[hasShard ? 3 : 2];
  int64_t vocab = table.shape[0], dim = table.shape[1];
  int64_t n = countOf(ids) * dim;
  if (n == 0)
    return cudaSuccess;
  LookupArgs args{table.data,
                  ids.data,
                  hasShard ? t[2].data : nullptr,
                  result.data,
                  ids.dtype,
                  hasShard ? t[2].dtype : PARCRT_I64,
                  vocab,
                  dim,
                  n,
                  errors,
                  /*embedding=*/true,
                  stream};
  return dispatchBytes(dtypeBytes(table.dtype), args);
}

cudaError_t parcrt::cuda::launchTake(const TensorRef *t, bool hasShard,
                                     int *errors, cudaStream_t stream) {
  const TensorRef &input = t[0], &indices = t[1];
  const TensorRef &result = t[hasShard ? 3 : 2];
  int64_t classes = input.shape[input.rank - 1];
  int64_t n = countOf(indices);
  if (n == 0)
    return cudaSuccess;
  LookupArgs args{input.data,
                  indices.data,
                  hasShard ? t[2].data : nullptr,
                  result.data,
                  indices.dtype,
                  hasShard ? t[2].dtype : PARCRT_I64,
                  n,
                  classes,
                  n,
                  errors,
                  /*embedding=*/false,
                  stream};
  return dispatchBytes(dtypeBytes(input.dtype), args);
}

cudaError_t parcrt::cuda::launchCrossEntropy(const TensorRef *t, float *scratch,
                                             int *errors, cudaStream_t stream) {
  const TensorRef &logits = t[0], &labels = t[1];
  int64_t classes = logits.shape[logits.rank - 1];
  int64_t rows = countOf(labels);
  if (rows > 0) {
    crossEntropyRowKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const float *>(logits.data), labels.data, labels.dtype,
        scratch, classes, errors);
    cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess)
      return status;
  }
  meanKernel<<<1, 1024, 0, stream>>>(scratch, rows,
                                     static_cast<float *>(t[2].data));
  return cudaGetLastError();
}

cudaError_t parcrt::cuda::launchPermute(void *dst, const void *src,
                                        size_t elementBytes, int rank,
                                        const int64_t *shape,
                                        const int64_t *perm,
                                        cudaStream_t stream) {
  int64_t srcStrides[kMaxRank];
  rowMajorStrides(rank, shape, srcStrides);
  IndexMap map;
  map.rank = rank;
  for (int d = 0; d < rank; ++d) {
    map.shape[d] = shape[perm[d]];
    map.strides[d] = srcStrides[perm[d]];
  }
  return launchGather(dst, src, elementBytes, map, 0, stream);
}

cudaError_t parcrt::cuda::launchSlice(const TensorRef *t,
                                      const int64_t *offsets,
                                      const int64_t *strides,
                                      cudaStream_t stream) {
  int64_t inStrides[kMaxRank];
  rowMajorStrides(t[0].rank, t[0].shape, inStrides);
  IndexMap map;
  map.rank = t[1].rank;
  int64_t base = 0;
  for (int d = 0; d < t[1].rank; ++d) {
    map.shape[d] = t[1].shape[d];
    map.strides[d] = strides[d] * inStrides[d];
    base += offsets[d] * inStrides[d];
  }
  return launchGather(t[1].data, t[0].data, dtypeBytes(t[1].dtype), map, base,
                      stream);
}

cudaError_t parcrt::cuda::launchBroadcastTo(const TensorRef *t,
                                            cudaStream_t stream) {
  return launchGather(t[1].data, t[0].data, dtypeBytes(t[1].dtype),
                      broadcastMap(t[0], t[1]), 0, stream);
}

cudaError_t parcrt::cuda::launchSliceGrad(const TensorRef *t,
                                          const int64_t *offsets,
                                          const int64_t *strides,
                                          cudaStream_t stream) {
  const TensorRef &in = t[0], &out = t[1];
  size_t elementBytes = dtypeBytes(out.dtype);
  int64_t total = countOf(out);
  if (total == 0)
    return cudaSuccess;
  // Zero bytes are zero in every dtype.
  cudaError_t status =
      cudaMemsetAsync(out.data, 0, total * elementBytes, stream);
  int64_t n = countOf(in);
  if (status != cudaSuccess || n == 0)
    return status;
  int64_t outStrides[kMaxRank];
  rowMajorStrides(out.rank, out.shape, outStrides);
  IndexMap map;
  map.rank = in.rank;
  int64_t base = 0;
  for (int d = 0; d < in.rank; ++d) {
    map.shape[d] = in.shape[d];
    map.strides[d] = strides[d] * outStrides[d];
    base += offsets[d] * outStrides[d];
  }
  return dispatchBytes(elementBytes,
                       ScatterLaunch{out.data, in.data, map, base, n, stream});
}

cudaError_t parcrt::cuda::launchCopy2D(void *dst, int64_t dstPitch,
                                       const void *src, int64_t srcPitch,
                                       int64_t width, int64_t rows,
                                       size_t elementBytes,
                                       cudaStream_t stream) {
  int64_t n = width * rows;
  if (n == 0)
    return cudaSuccess;
  return dispatchBytes(elementBytes, Copy2DLaunch{dst, dstPitch, src, srcPitch,
                                                  width, n, stream});
}

cudaError_t parcrt::cuda::launchReduce(Backend::Reduce op, const TensorRef *t,
                                       const int64_t *axes, int numAxes,
                                       cudaStream_t stream) {
  const TensorRef &in = t[0];
  bool reduced[kMaxRank] = {};
  for (int a = 0; a < numAxes; ++a)
    reduced[axes[a]] = true;
  int64_t strides[kMaxRank];
  rowMajorStrides(in.rank, in.shape, strides);
  ReduceArgs args;
  args.outputs = 1;
  args.count = 1;
  for (int d = 0; d < in.rank; ++d) {
    IndexMap &map = reduced[d] ? args.reduced : args.kept;
    map.shape[map.rank] = in.shape[d];
    map.strides[map.rank] = strides[d];
    ++map.rank;
    (reduced[d] ? args.count : args.outputs) *= in.shape[d];
  }
  if (args.outputs == 0)
    return cudaSuccess;
  switch (op) {
  case Backend::Reduce::Sum:
    return reduceTyped<Backend::Reduce::Sum>(t, args, stream);
  case Backend::Reduce::Mean:
    return reduceTyped<Backend::Reduce::Mean>(t, args, stream);
  case Backend::Reduce::Max:
    return reduceTyped<Backend::Reduce::Max>(t, args, stream);
  case Backend::Reduce::LogSumExp:
    return reduceTyped<Backend::Reduce::LogSumExp>(t, args, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t parcrt::cuda::launchFill(void *dst, parcrt_dtype dtype,
                                     int64_t count, const double *values,
                                     double splat, cudaStream_t stream) {
  if (count == 0)
    return cudaSuccess;
  switch (dtype) {
  case PARCRT_F32:
    return fillTyped<float>(dst, count, values, splat, stream);
  case PARCRT_F16:
    return fillTyped<__half>(dst, count, values, splat, stream);
  case PARCRT_BF16:
    return fillTyped<__nv_bfloat16>(dst, count, values, splat, stream);
  case PARCRT_I32:
    return fillTyped<int32_t>(dst, count, values, splat, stream);
  case PARCRT_I64:
    return fillTyped<int64_t>(dst, count, values, splat, stream);
  }
  return cudaErrorInvalidValue;
}
