//===- Dnnl.h - the oneDNN primitives of the cpu kernels --------*- C++ -*-===//
//
// oneDNN JIT-compiles its kernels for the cpu it runs on (AVX-512, AVX2,
// SSE4.1): the GEMMs (threaded on the OpenMP team, or on the calling thread
// alone inside a parallel region), the vectorized transcendental
// activations and the convolutions. Primitives are made once per shape and
// kept.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_DNNL_H
#define PARCRT_CPU_DNNL_H

#include "core/Windows.h"
#include "parcrt/Backend.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <optional>

namespace parcrt::cpu::dnnl {

/// c = alpha op(a) op(b) + beta c, row-major (op = transpose where asked).
void gemm(bool transposeA, bool transposeB, int64_t m, int64_t n, int64_t k,
          float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
          float beta, float *c, int64_t ldc);

/// A oneDNN eltwise function: its algorithm and parameters.
struct Eltwise {
  ::dnnl::algorithm kind;
  float alpha = 0, beta = 0;
};

/// The eltwise function of an activation; none for relu, whose gradient
/// passes NaN through as PyTorch's does and oneDNN's does not.
std::optional<Eltwise> eltwiseOf(Backend::Activation kind);

/// dst[i] = f(src[i]) over `count` elements; dst may be src. Threaded on
/// the kernel team, or on the calling thread alone inside a parallel region.
void eltwise(Eltwise f, const float *src, float *dst, int64_t count);

/// diffSrc[i] = f'(src[i]) diffDst[i]; diffSrc may alias either operand.
void eltwiseGrad(Eltwise f, const float *src, const float *diffDst,
                 float *diffSrc, int64_t count);

/// The shapes and geometry of a 2-D convolution over NCHW tensors, as
/// conv2d's ABI passes them (parcrt/Ops.def; core/Windows.h reads them).
using Convolution = ConvolutionShape;

/// Which of a convolution's three products to compute: the output from the
/// input and the weight, or one of their gradients from the output's.
enum class ConvolutionPass { Forward, InputGrad, WeightGrad };

/// Overwrites the output (Forward), the input (InputGrad) or the weight
/// (WeightGrad) with the pass's product of the other two tensors.
void convolution(ConvolutionPass pass, const Convolution &shape, float *input,
                 float *weight, float *output);

} // namespace parcrt::cpu::dnnl

#endif // PARCRT_CPU_DNNL_H
