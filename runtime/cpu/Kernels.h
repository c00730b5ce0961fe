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
/// Ends the job unless every element of `labels` lies in [first, last),
/// naming the first that does not.
void requireLabels(const char *op, const TensorRef &labels, int64_t first,
                   int64_t last);
/// The first id of a vocabulary block: shard index times the block size.
int64_t shardStart(const char *op, const TensorRef &shard, int64_t blockSize);

using Unary = Backend::Unary;
using Comparison = Backend::Comparison;
using Reduce = Backend::Reduce;
using Activation = Backend::Activation;

// One kernel per compute method of the backend (parcrt/BackendOps.def), in
// ElementwiseKernels.cpp, LinearAlgebraKernels.cpp, NormalizationKernels.cpp,
// LayoutKernels.cpp, ReductionKernels.cpp, LossKernels.cpp,
// GradientKernels.cpp (broadcast_to and slice_grad move any dtype; the
// others compute in f32) and OptimizerKernels.cpp.
#define PARCRT_BACKEND_OP(method, parameters, arguments) void method parameters;
#include "parcrt/BackendOps.def"

} // namespace parcrt::cpu

#endif // PARCRT_CPU_KERNELS_H
