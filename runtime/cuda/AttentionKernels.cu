//===- AttentionKernels.cu - flash attention and its gradient -------------===//
//
// The kernels run core/FlashAttention.h with a block of threads per tile of
// queries (forward, query gradient) or keys (key and value gradients), the
// tiles in dynamic shared memory at the largest size the device allows. The
// gradient is three launches: the forward pass writing each query row's
// log-sum-exp and g . out (no output), dq, then dk and dv; none needs
// atomics, so results are deterministic.
//
//===----------------------------------------------------------------------===//

#include "CudaSupport.h"
#include "Kernels.h"
#include "core/FlashAttention.h"

#include <cuda_runtime.h>

#include <climits>

using namespace parcrt;
using namespace parcrt::cuda;
namespace flash = parcrt::math::flash;

namespace {

constexpr int kFlashThreads = 128;

/// The kernel's block of threads: forEach spreads the iterations over them
/// and waits for all at a barrier.
struct ThreadBlock {
  template <typename F> __host__ __device__ void forEach(int64_t n, F f) const {
#ifdef __CUDA_ARCH__
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      f(i);
    __syncthreads();
#endif
  }
};

__global__ void flashForwardKernel(flash::Operands op, int64_t tileSize,
                                   int64_t tiles) {
  extern __shared__ float shared[];
  flash::forward(ThreadBlock{}, op, tileSize, blockIdx.x / tiles,
                 blockIdx.x % tiles, shared);
}

__global__ void flashQueryGradientKernel(flash::Operands op, int64_t tileSize,
                                         int64_t tiles) {
  extern __shared__ float shared[];
  flash::queryGradient(ThreadBlock{}, op, tileSize, blockIdx.x / tiles,
                       blockIdx.x % tiles, shared);
}

__global__ void flashKeyGradientKernel(flash::Operands op, int64_t tileSize,
                                       int64_t tiles) {
  extern __shared__ float shared[];
  flash::keyGradient(ThreadBlock{}, op, tileSize, blockIdx.x / tiles,
                     blockIdx.x % tiles, shared);
}

/// The shared memory one block may use on the current device (with the
/// opt-in above the default 48 KiB), in floats.
int64_t sharedBudgetFloats() {
  int device = 0, bytes = 48 * 1024;
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                           device);
  return bytes / static_cast<int64_t>(sizeof(float));
}

/// Launches `kernel` over `groups` x the tiles of `length` rows, at the
/// largest tile size pass `Tiles` fits in shared memory.
template <typename Tiles>
cudaError_t launchTiles(void (*kernel)(flash::Operands, int64_t, int64_t),
                        const flash::Operands &op, int64_t groups,
                        int64_t length, cudaStream_t stream) {
  const math::AttentionShape &shape = op.shape;
  if (groups == 0 || length == 0)
    return cudaSuccess;
  int64_t tileSize = flash::tileRows<Tiles>(shape.headDim, shape.valueDim,
                                            sharedBudgetFloats());
  if (tileSize == 0)
    return cudaErrorInvalidValue;
  int64_t tiles = (length + tileSize - 1) / tileSize;
  if (groups > INT_MAX / tiles)
    return cudaErrorInvalidConfiguration;
  size_t bytes =
      flash::sharedFloats<Tiles>(tileSize, shape.headDim, shape.valueDim) *
      sizeof(float);
  cudaError_t status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(bytes));
  if (status != cudaSuccess)
    return status;
  kernel<<<static_cast<unsigned>(groups * tiles), kFlashThreads, bytes,
           stream>>>(op, tileSize, tiles);
  return cudaGetLastError();
}

flash::Operands operands(const TensorRef *t, const TensorRef *mask, bool causal,
                         double scale) {
  flash::Operands op;
  op.shape = math::attentionShape(t[0], t[1], t[2], mask);
  op.causal = causal;
  op.scale = static_cast<float>(scale);
  op.q = static_cast<const float *>(t[0].data);
  op.k = static_cast<const float *>(t[1].data);
  op.v = static_cast<const float *>(t[2].data);
  return op;
}

} // namespace

bool parcrt::cuda::attentionFitsSharedMemory(int64_t headDim,
                                             int64_t valueDim) {
  int64_t budget = sharedBudgetFloats();
  return flash::tileRows<flash::ForwardTiles>(headDim, valueDim, budget) &&
         flash::tileRows<flash::QueryGradientTiles>(headDim, valueDim,
                                                    budget) &&
         flash::tileRows<flash::KeyGradientTiles>(headDim, valueDim, budget);
}

cudaError_t parcrt::cuda::launchAttention(const TensorRef *t, bool causal,
                                          bool hasMask, double scale,
                                          cudaStream_t stream) {
  flash::Operands op = operands(t, hasMask ? &t[3] : nullptr, causal, scale);
  op.out = static_cast<float *>(t[hasMask ? 4 : 3].data);
  const math::AttentionShape &shape = op.shape;
  return launchTiles<flash::ForwardTiles>(
      flashForwardKernel, op, shape.batch * shape.heads, shape.queries, stream);
}

cudaError_t parcrt::cuda::launchAttentionGrad(const TensorRef *t, bool causal,
                                              bool hasMask, double scale,
                                              float *scratch,
                                              cudaStream_t stream) {
  flash::Operands op = operands(t, hasMask ? &t[4] : nullptr, causal, scale);
  const TensorRef *results = t + (hasMask ? 5 : 4);
  op.g = static_cast<const float *>(t[3].data);
  op.rowStats = scratch;
  op.dq = static_cast<float *>(results[0].data);
  op.dk = static_cast<float *>(results[1].data);
  op.dv = static_cast<float *>(results[2].data);
  const math::AttentionShape &shape = op.shape;
  int64_t queryHeads = shape.batch * shape.heads;
  cudaError_t status = launchTiles<flash::ForwardTiles>(
      flashForwardKernel, op, queryHeads, shape.queries, stream);
  if (status == cudaSuccess)
    status = launchTiles<flash::QueryGradientTiles>(
        flashQueryGradientKernel, op, queryHeads, shape.queries, stream);
  if (status == cudaSuccess)
    status = launchTiles<flash::KeyGradientTiles>(flashKeyGradientKernel, op,
                                                  shape.batch * shape.kvHeads,
                                                  shape.keys, stream);
  return status;
}
