//===- ConvolutionKernels.cpp - reference kernels of the convolutions -----===//
//
// conv2d and its two gradients visit the same multiply-adds: each kernel
// accumulates a different one of the three tensors from the other two.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "parc/IR/ConvolutionGeometry.h"

#include <array>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Calls `body(input, weight, output)` with the row-major positions of each
/// multiply-add of the convolution over tensors of these shapes; taps that
/// fall in the padding have no input and are skipped.
template <typename Fn>
static void forEachTap(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                       ArrayRef<int64_t> output,
                       const ConvolutionGeometry &geometry, Fn &&body) {
  int64_t channels = input[1], height = input[2], width = input[3];
  int64_t filters = weight[0], groupChannels = weight[1];
  int64_t kernelHeight = weight[2], kernelWidth = weight[3];
  int64_t filtersPerGroup = filters / geometry.groups;
  for (int64_t n = 0; n < output[0]; ++n)
    for (int64_t o = 0; o < filters; ++o) {
      int64_t firstChannel = o / filtersPerGroup * groupChannels;
      for (int64_t y = 0; y < output[2]; ++y)
        for (int64_t x = 0; x < output[3]; ++x) {
          int64_t out = ((n * filters + o) * output[2] + y) * output[3] + x;
          for (int64_t c = 0; c < groupChannels; ++c)
            for (int64_t ky = 0; ky < kernelHeight; ++ky) {
              int64_t row = y * geometry.strides[0] - geometry.padding[0] +
                            ky * geometry.dilations[0];
              if (row < 0 || row >= height)
                continue;
              for (int64_t kx = 0; kx < kernelWidth; ++kx) {
                int64_t column = x * geometry.strides[1] - geometry.padding[1] +
                                 kx * geometry.dilations[1];
                if (column < 0 || column >= width)
                  continue;
                int64_t in =
                    ((n * channels + firstChannel + c) * height + row) * width +
                    column;
                int64_t w = ((o * groupChannels + c) * kernelHeight + ky) *
                                kernelWidth +
                            kx;
                body(in, w, out);
              }
            }
        }
    }
}

/// Accumulates tensor `result` of (input, weight, output) from the other
/// two, which are the op's operands in that order.
template <typename OpT, unsigned result>
static LogicalResult convolutionKernel(OpT op,
                                       ArrayRef<const Tensor *> operands,
                                       MutableArrayRef<Tensor> results) {
  std::array<const Tensor *, 3> tensors;
  for (unsigned tensor = 0, operand = 0; tensor < 3; ++tensor)
    tensors[tensor] = tensor == result ? &results[0] : operands[operand++];
  std::array<const double *, 3> values;
  for (unsigned tensor = 0; tensor < 3; ++tensor)
    values[tensor] = tensors[tensor]->values.data();
  double *sum = results[0].values.data();
  forEachTap(tensors[0]->shape, tensors[1]->shape, tensors[2]->shape,
             getConvolutionGeometry(op),
             [&](int64_t input, int64_t weight, int64_t output) {
               std::array<int64_t, 3> at = {input, weight, output};
               double product = 1;
               for (unsigned tensor = 0; tensor < 3; ++tensor)
                 if (tensor != result)
                   product *= values[tensor][at[tensor]];
               sum[at[result]] += product;
             });
  return success();
}

void mlir::parc::interp::attachConvolutionKernels(MLIRContext *context) {
  attachKernel<Conv2dOp, convolutionKernel<Conv2dOp, 2>>(context);
  attachKernel<Conv2dInputGradOp, convolutionKernel<Conv2dInputGradOp, 0>>(
      context);
  attachKernel<Conv2dWeightGradOp, convolutionKernel<Conv2dWeightGradOp, 1>>(
      context);
}
