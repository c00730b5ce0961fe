//===- Kernels.h - CUDA kernels of the cuda backend -------------*- C++ -*-===//
//
// Host-side launchers of the cuda backend's own kernels, one per op family.
// Every launcher enqueues its work on `stream` and returns the launch's
// status; the caller (CudaBackend.cpp) has already checked dtypes and
// shapes, so the kernels assume valid input. Floating-point math is f32;
// layout kernels move elements of any size (1, 2, 4 or 8 bytes).
//
// This header is plain C++ (no CUDA syntax) so that host-only translation
// units compiled by the C++ compiler can include it.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CUDA_KERNELS_H
#define PARCRT_CUDA_KERNELS_H

#include "core/Windows.h"
#include "parcrt/Backend.h"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace parcrt::cuda {

/// Elementwise `op` ('+', '-', '*', '/', '^') of t[0] and t[1] with numpy
/// broadcasting into t[2]; all three share one dtype (f32, i32 or i64).
cudaError_t launchBinary(char op, const TensorRef *t, cudaStream_t stream);

/// Unary f32 ops, numbered as Backend::Unary.
cudaError_t launchUnary(Backend::Unary op, const TensorRef *t,
                        cudaStream_t stream);

/// t[3] = t[0] != 0 ? t[1] : t[2], broadcast; the condition is i32 or i64,
/// the values of any dtype.
cudaError_t launchSelect(const TensorRef *t, cudaStream_t stream);
cudaError_t launchCompare(const TensorRef *t, Backend::Comparison predicate,
                          cudaStream_t stream);

/// t[1] = t[0] converted elementwise, between f32, i32 and i64 (float to
/// integer truncates toward zero).
cudaError_t launchCast(const TensorRef *t, cudaStream_t stream);

/// softmax of t[0] along `axis` into t[1] (f32).
cudaError_t launchSoftmax(const TensorRef *t, int64_t axis,
                          cudaStream_t stream);
/// t = {x, gamma, beta, result}, normalized over the last dimension.
cudaError_t launchLayerNorm(const TensorRef *t, double epsilon,
                            cudaStream_t stream);
/// t = {x, gamma, result}.
cudaError_t launchRmsNorm(const TensorRef *t, double epsilon,
                          cudaStream_t stream);

/// Bits set in the device error word by a kernel that meets an index the
/// reference evaluator rejects; the backend reports them at synchronize().
enum : int {
  kEmbeddingIdError = 1,
  kTakeIndexError = 2,
  kCrossEntropyLabelError = 4,
  kEmbeddingGradIdError = 8,
  kCrossEntropyGradLabelError = 16,
};

/// t = {table [V, D], ids (i32/i64), [shard scalar (i32/i64)], result}, any
/// table dtype. Ids outside the table's block give zero rows; without a
/// shard they also set kEmbeddingIdError in `*errors`.
cudaError_t launchEmbedding(const TensorRef *t, bool hasShard, int *errors,
                            cudaStream_t stream);
/// t = {input [S.., C], indices [S..], [shard], result [S..]}, any dtype;
/// as embedding (kTakeIndexError).
cudaError_t launchTake(const TensorRef *t, bool hasShard, int *errors,
                       cudaStream_t stream);

/// Whether flash attention's tiles of one row fit the device's shared
/// memory at head dimensions D and E (AttentionKernels.cu).
bool attentionFitsSharedMemory(int64_t headDim, int64_t valueDim);
/// t = {q [B,H,S,D], k [B,Hkv,T,D], v [B,Hkv,T,E], [mask [B|1,H|1,S|1,T]],
/// result [B,H,S,E]} (f32).
cudaError_t launchAttention(const TensorRef *t, bool causal, bool hasMask,
                            double scale, cudaStream_t stream);

/// t = {logits [S.., C] f32, labels [S..] i32/i64, result scalar f32};
/// `scratch` holds at least one float per position. A label outside
/// [0, C) makes the loss NaN and sets kCrossEntropyLabelError.
cudaError_t launchCrossEntropy(const TensorRef *t, float *scratch, int *errors,
                               cudaStream_t stream);

/// dst = src permuted: dst dimension i is src dimension perm[i]. `shape` is
/// src's shape; elements are `elementBytes` wide.
cudaError_t launchPermute(void *dst, const void *src, size_t elementBytes,
                          int rank, const int64_t *shape, const int64_t *perm,
                          cudaStream_t stream);

/// t[1][i] = t[0][offsets + i * strides] (any element size).
cudaError_t launchSlice(const TensorRef *t, const int64_t *offsets,
                        const int64_t *strides, cudaStream_t stream);

/// Row copy: for r < rows, x < width (elements):
/// dst[r * dstPitch + x] = src[r * srcPitch + x].
cudaError_t launchCopy2D(void *dst, int64_t dstPitch, const void *src,
                         int64_t srcPitch, int64_t width, int64_t rows,
                         size_t elementBytes, cudaStream_t stream);

/// Reduction of t[0] over `axes` into t[1] (f32; keepdims or not, the
/// result holds the kept dimensions in order).
cudaError_t launchReduce(Backend::Reduce op, const TensorRef *t,
                         const int64_t *axes, int numAxes, cudaStream_t stream);

/// numpy broadcast of t[0] to t[1]'s shape (any element size).
cudaError_t launchBroadcastTo(const TensorRef *t, cudaStream_t stream);

/// t[1] = zeros with t[1][offsets + i * strides] = t[0][i] (any element
/// size).
cudaError_t launchSliceGrad(const TensorRef *t, const int64_t *offsets,
                            const int64_t *strides, cudaStream_t stream);

/// Fills `count` elements of `dtype` at `dst` from `values` (device memory,
/// `count` doubles) or, when `values` is null, with `splat`.
cudaError_t launchFill(void *dst, parcrt_dtype dtype, int64_t count,
                       const double *values, double splat, cudaStream_t stream);

//===----------------------------------------------------------------------===//
// Gradients and optimizers (GradientKernels.cu), all f32 unless noted.
//===----------------------------------------------------------------------===//

/// t = {x, g, result}: g * f'(x).
cudaError_t launchActivationGrad(Backend::Activation kind, const TensorRef *t,
                                 cudaStream_t stream);
/// t = {y, g, result}: y * (g - sum(g * y, axis)).
cudaError_t launchSoftmaxGrad(const TensorRef *t, int64_t axis,
                              cudaStream_t stream);
/// t = {x, gamma, g, dx, dgamma, dbeta} over the last dimension; `scratch`
/// holds at least two floats per row.
cudaError_t launchLayerNormGrad(const TensorRef *t, double epsilon,
                                float *scratch, cudaStream_t stream);
/// t = {x, gamma, g, dx, dgamma}; `scratch` as for layer_norm_grad.
cudaError_t launchRmsNormGrad(const TensorRef *t, double epsilon,
                              float *scratch, cudaStream_t stream);
/// t = {ids (i32/i64), g [ids.., D], [shard (i32/i64)], table grad [V, D]}:
/// zeroes the result, then scatter-adds g's rows. Without a shard an id
/// outside [0, V) sets kEmbeddingGradIdError; with one it is skipped.
cudaError_t launchEmbeddingGrad(const TensorRef *t, bool hasShard, int *errors,
                                cudaStream_t stream);
/// t = {q [B,H,S,D], k [B,Hkv,T,D], v [B,Hkv,T,E], g [B,H,S,E], [mask],
/// dq, dk, dv}; `scratch` holds at least two floats per query row (B*H*S).
cudaError_t launchAttentionGrad(const TensorRef *t, bool causal, bool hasMask,
                                double scale, float *scratch,
                                cudaStream_t stream);
/// t = {logits [S.., C], labels [S..] (i32/i64), g (scalar), [normalizer
/// [S..], shard], result [S.., C]}: (softmax(logits) - onehot(labels)) * g
/// / count. Without a shard, a label outside [0, C) gives a NaN row and sets
/// kCrossEntropyGradLabelError; with one, the logits are block `shard` of
/// the classes, the softmax exp(logits - normalizer), and other labels add
/// no one-hot term.
cudaError_t launchCrossEntropyGrad(const TensorRef *t, int64_t count,
                                   bool hasShard, int *errors,
                                   cudaStream_t stream);
/// t = {param, grad, m, v, step (scalar, 1-based), [skip (scalar), when
/// skippable], param', m', v'}.
cudaError_t launchAdamwUpdate(const TensorRef *t, bool skippable, double lr,
                              double beta1, double beta2, double epsilon,
                              double weightDecay, cudaStream_t stream);
/// t = {param, grad, buffer, [skip], param', buffer'}.
cudaError_t launchSgdUpdate(const TensorRef *t, bool skippable, double lr,
                            double momentum, cudaStream_t stream);
/// t = {sum of squares (scalar), result (scalar)}:
/// min(1, maxNorm / (sqrt(sum) + 1e-6)).
cudaError_t launchClipCoefficient(const TensorRef *t, double maxNorm,
                                  cudaStream_t stream);

/// conv2d's columns of one image's `channels` planes (a group's):
/// [channels x KH x KW, OH x OW], 0 where a tap falls in the padding.
cudaError_t launchIm2col(const float *image, float *columns, const Window2d &w,
                         int64_t channels, cudaStream_t stream);
/// The inverse fold: each image element sums the column entries im2col
/// took from it (the input gradient from the columns' gradient).
cudaError_t launchCol2im(const float *columns, float *image, const Window2d &w,
                         int64_t channels, cudaStream_t stream);
/// The poolings, t as Backend's (f32): {input, output}, {input, output's
/// gradient, input's gradient} and {output's gradient, input's gradient}.
cudaError_t launchMaxPool2d(const TensorRef *t, const Window2d &w,
                            cudaStream_t stream);
cudaError_t launchMaxPool2dGrad(const TensorRef *t, const Window2d &w,
                                cudaStream_t stream);
cudaError_t launchAvgPool2d(const TensorRef *t, const Window2d &w,
                            bool countIncludePad, cudaStream_t stream);
cudaError_t launchAvgPool2dGrad(const TensorRef *t, const Window2d &w,
                                bool countIncludePad, cudaStream_t stream);

} // namespace parcrt::cuda

#endif // PARCRT_CUDA_KERNELS_H
