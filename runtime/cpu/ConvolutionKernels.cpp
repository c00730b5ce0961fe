//===- ConvolutionKernels.cpp - conv2d and its gradients on oneDNN --------===//
//
// Each kernel checks the tensors against the geometry the compiler passed
// (a mismatch ends the job with a message) and runs oneDNN's convolution
// primitive for its pass over the plain NCHW tensors.
//
//===----------------------------------------------------------------------===//

#include "cpu/Dnnl.h"
#include "cpu/Kernels.h"

#include "core/Fatal.h"

#include <string>

using namespace parcrt;
using cpu::dnnl::Convolution;
using cpu::dnnl::ConvolutionPass;

namespace {
std::string shapeOf(const TensorRef &t) {
  std::string text = "[";
  for (int dim = 0; dim < t.rank; ++dim)
    text += (dim ? ", " : "") + std::to_string(t.shape[dim]);
  return text + "]";
}

/// The convolution of `input`, `weight` and `output` under `geometry`
/// (strides, padding, dilations, groups), once their shapes agree with it.
Convolution convolutionOf(const char *op, const TensorRef &input,
                          const TensorRef &weight, const TensorRef &output,
                          const int64_t *geometry) {
  auto mismatch = [&](const std::string &why) {
    fatal(std::string(op) + ": " + why + " (input " + shapeOf(input) +
          ", weight " + shapeOf(weight) + ", output " + shapeOf(output) + ")");
  };
  if (input.rank != 4 || weight.rank != 4 || output.rank != 4)
    mismatch("tensors must have rank 4");
  Convolution c;
  for (int dim = 0; dim < 4; ++dim) {
    c.input[dim] = input.shape[dim];
    c.weight[dim] = weight.shape[dim];
    c.output[dim] = output.shape[dim];
  }
  for (int i = 0; i < 2; ++i) {
    c.strides[i] = geometry[i];
    c.dilations[i] = geometry[6 + i];
  }
  for (int i = 0; i < 4; ++i)
    c.padding[i] = geometry[2 + i];
  c.groups = geometry[8];
  if (c.groups < 1 || c.input[1] != c.weight[1] * c.groups ||
      c.weight[0] % c.groups != 0 || c.output[0] != c.input[0] ||
      c.output[1] != c.weight[0])
    mismatch("channels, filters and " + std::to_string(c.groups) +
             " groups do not agree");
  for (int i = 0; i < 2; ++i) {
    // The sizes are the compiler's, checked there: no overflow here.
    int64_t padded = c.input[2 + i] + c.padding[i] + c.padding[2 + i];
    int64_t span = c.dilations[i] * (c.weight[2 + i] - 1) + 1;
    if (c.strides[i] < 1 || c.dilations[i] < 1 || c.padding[i] < 0 ||
        c.padding[2 + i] < 0 || span > padded ||
        c.output[2 + i] != (padded - span) / c.strides[i] + 1)
      mismatch("the spatial sizes do not follow from the geometry");
  }
  return c;
}

float *data(const TensorRef &t) { return static_cast<float *>(t.data); }
} // namespace

void cpu::conv2d(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d", t, 3);
  Convolution c = convolutionOf("conv2d", t[0], t[1], t[2], geometry);
  dnnl::convolution(ConvolutionPass::Forward, c, data(t[0]), data(t[1]),
                    data(t[2]));
}

void cpu::conv2dInputGrad(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d_input_grad", t, 3);
  Convolution c =
      convolutionOf("conv2d_input_grad", t[2], t[0], t[1], geometry);
  dnnl::convolution(ConvolutionPass::InputGrad, c, data(t[2]), data(t[0]),
                    data(t[1]));
}

void cpu::conv2dWeightGrad(const TensorRef *t, const int64_t *geometry) {
  requireF32("conv2d_weight_grad", t, 3);
  Convolution c =
      convolutionOf("conv2d_weight_grad", t[0], t[2], t[1], geometry);
  dnnl::convolution(ConvolutionPass::WeightGrad, c, data(t[0]), data(t[2]),
                    data(t[1]));
}
