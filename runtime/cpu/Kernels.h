//===- Kernels.h - the cpu backend's kernels, by op family ------*- C++ -*-===//
//
// Plain functions over TensorRefs (operands then results, as Backend.h
// passes them). Float compute kernels support f32 only; data movement
// (copy, transpose, slice, concat, embedding rows, take) works on any dtype
// by element size. Ids, labels and shard indices may be i32 or i64. A
// kernel that meets an unsupported dtype or a bad index ends the job with a
// message (core/Fatal.h): the Backend interface has no error channel.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_KERNELS_H
#define PARCRT_CPU_KERNELS_H

#include "parcrt/Backend.h"

namespace parcrt::cpu {

/// Ends the job unless the first `count` tensors of `t` are f32.
void requireF32(const char *op, const TensorRef *t, int count);
/// Ends the job unless `t` holds i32 or i64; `role` names it ("ids").
void requireInteger(const char *op, const char *role, const TensorRef &t);
/// Element `index` of an i32 or i64 tensor.
int64_t integerAt(const TensorRef &t, int64_t index);

void binary(char op, const TensorRef *t);
void unary(Backend::Unary op, const TensorRef *t);
void select(const TensorRef *t);
void cast(const TensorRef *t);

void matmul(const TensorRef *t, bool transposeLhs, bool transposeRhs);
void attention(const TensorRef *t, bool causal, double scale);

void softmax(const TensorRef *t, int64_t axis);
void layerNorm(const TensorRef *t, double epsilon);
void rmsNorm(const TensorRef *t, double epsilon);

void copy(const TensorRef *t);
void transpose(const TensorRef *t, const int64_t *perm);
void concat(const TensorRef *inputs, int numInputs, const TensorRef &result,
            int64_t axis);
void slice(const TensorRef *t, const int64_t *offsets, const int64_t *strides);
void constant(const TensorRef &result, const double *values, int64_t numValues);
void embedding(const TensorRef *t, bool hasShard);
void take(const TensorRef *t, bool hasShard);

void reduce(Backend::Reduce op, const TensorRef *t, const int64_t *axes,
            int numAxes);

void crossEntropy(const TensorRef *t);

// Gradients (GradientKernels.cpp): broadcast_to and slice_grad move any
// dtype; the others compute in f32.
void broadcastTo(const TensorRef *t);
void sliceGrad(const TensorRef *t, const int64_t *offsets,
               const int64_t *strides);
void activationGrad(Backend::Activation kind, const TensorRef *t);
void softmaxGrad(const TensorRef *t, int64_t axis);
void layerNormGrad(const TensorRef *t, double epsilon);
void rmsNormGrad(const TensorRef *t, double epsilon);
void embeddingGrad(const TensorRef *t, bool hasShard);
void attentionGrad(const TensorRef *t, bool causal, double scale);
void crossEntropyGrad(const TensorRef *t, int64_t count);

// Optimizers (OptimizerKernels.cpp).
void adamwUpdate(const TensorRef *t, double lr, double beta1, double beta2,
                 double epsilon, double weightDecay);
void sgdUpdate(const TensorRef *t, double lr, double momentum);
void clipCoefficient(const TensorRef *t, double maxNorm);

} // namespace parcrt::cpu

#endif // PARCRT_CPU_KERNELS_H
