//===- DeviceCommon.cuh - helpers shared by the CUDA kernel files ---------===//
//
// Included inside each kernel file's anonymous namespace: every translation
// unit gets its own copy (no relocatable device code is needed).
//
//===----------------------------------------------------------------------===//

constexpr int kThreads = 256;

int64_t countOf(const TensorRef &t) { return t.numElements(); }

unsigned gridFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 1 << 20));
}

#define GRID_STRIDE_LOOP(i, n)                                                 \
  for (int64_t i =                                                             \
           blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

__device__ float warpReduceSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ float warpReduceMax(float v) {
  for (int offset = 16; offset > 0; offset >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

/// Sum (or max) of `v` over the block, returned to every thread. The block
/// size is a multiple of 32; every thread of the block must call it.
template <bool Max> __device__ float blockReduce(float v) {
  __shared__ float partial[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = Max ? warpReduceMax(v) : warpReduceSum(v);
  __syncthreads(); // the previous call's readers are done with partial[0]
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  if (warp == 0) {
    v = lane < warps ? partial[lane] : (Max ? -INFINITY : 0.0f);
    v = Max ? warpReduceMax(v) : warpReduceSum(v);
    if (lane == 0)
      partial[0] = v;
  }
  __syncthreads();
  return partial[0];
}

/// An index read from an integer (or integral f32) tensor.
__device__ int64_t loadIndex(const void *data, int dtype, int64_t i) {
  switch (dtype) {
  case PARCRT_I64:
    return static_cast<const int64_t *>(data)[i];
  case PARCRT_I32:
    return static_cast<const int32_t *>(data)[i];
  default:
    return static_cast<int64_t>(floorf(static_cast<const float *>(data)[i]));
  }
}
