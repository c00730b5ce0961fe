//===- ConvolutionKernels.cpp - conv2d and its gradients on oneDNN --------===//
//
// Each kernel checks the tensors against the geometry the compiler passed
// (readConvolution: a mismatch ends the job with a message) and runs oneDNN's
// convolution primitive for its pass over the plain NCHW tensors.
//
//===----------------------------------------------------------------------===//

#include "cpu/Dnnl.h"
#include "cpu/Kernels.h"

#include "core/Windows.h"

using namespace parcrt;
using cpu::dnnl::Convolution;
using cpu::dnnl::ConvolutionPass;

namespace {
float *data(const TensorRef &t) { return static_cast<float *>(t.data); }
} // namespace

void cpu::conv2d(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d", t, 3);
  Convolution c = readConvolution("conv2d", t[0], t[1], t[2], geometry);
  dnnl::convolution(ConvolutionPass::Forward, c, data(t[0]), data(t[1]),
                    data(t[2]));
}

void cpu::conv2dInputGrad(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d_input_grad", t, 3);
  Convolution c =
      readConvolution("conv2d_input_grad", t[2], t[0], t[1], geometry);
  dnnl::convolution(ConvolutionPass::InputGrad, c, data(t[2]), data(t[0]),
                    data(t[1]));
}

void cpu::conv2dWeightGrad(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d_weight_grad", t, 3);
  Convolution c =
      readConvolution("conv2d_weight_grad", t[0], t[2], t[1], geometry);
  dnnl::convolution(ConvolutionPass::WeightGrad, c, data(t[0]), data(t[2]),
                    data(t[1]));
}
