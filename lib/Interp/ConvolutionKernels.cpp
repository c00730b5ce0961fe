//===- ConvolutionKernels.cpp - reference convolutions and poolings -------===//
//
// conv2d and its two gradients visit the same multiply-adds: each kernel
// accumulates a different one of the three tensors from the other two. The
// poolings visit each window's input elements in row-major order.
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

/// Calls `body(output, taps)` for each output position of a pooling with
/// the row-major positions of its window's input elements, in the window's
/// row-major order (padding skipped).
template <typename Fn>
static void forEachWindow(ArrayRef<int64_t> input, ArrayRef<int64_t> output,
                          const PoolingWindow &window, Fn &&body) {
  SmallVector<int64_t> taps;
  for (int64_t plane = 0; plane < output[0] * output[1]; ++plane)
    for (int64_t y = 0; y < output[2]; ++y)
      for (int64_t x = 0; x < output[3]; ++x) {
        taps.clear();
        for (int64_t ky = 0; ky < window.kernel[0]; ++ky) {
          int64_t row = y * window.strides[0] - window.padding[0] +
                        ky * window.dilations[0];
          for (int64_t kx = 0; kx < window.kernel[1]; ++kx) {
            int64_t column = x * window.strides[1] - window.padding[1] +
                             kx * window.dilations[1];
            if (row >= 0 && row < input[2] && column >= 0 && column < input[3])
              taps.push_back((plane * input[2] + row) * input[3] + column);
          }
        }
        body((plane * output[2] + y) * output[3] + x, ArrayRef<int64_t>(taps));
      }
}

/// The window element max_pool2d takes: the first maximum, or the last NaN
/// (PyTorch's rule: a NaN replaces any value).
static int64_t argmax(const std::vector<double> &values,
                      ArrayRef<int64_t> taps) {
  int64_t best = taps.front();
  for (int64_t tap : taps.drop_front())
    if (values[tap] > values[best] || std::isnan(values[tap]))
      best = tap;
  return best;
}

static LogicalResult maxPool2dKernel(MaxPool2dOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &input = *operands[0];
  forEachWindow(input.shape, results[0].shape, getPoolingWindow(op),
                [&](int64_t out, ArrayRef<int64_t> taps) {
                  results[0].values[out] =
                      input.values[argmax(input.values, taps)];
                });
  return success();
}

static LogicalResult maxPool2dGradKernel(MaxPool2dGradOp op,
                                         ArrayRef<const Tensor *> operands,
                                         MutableArrayRef<Tensor> results) {
  const Tensor &input = *operands[0], &gradient = *operands[1];
  forEachWindow(input.shape, gradient.shape, getPoolingWindow(op),
                [&](int64_t out, ArrayRef<int64_t> taps) {
                  results[0].values[argmax(input.values, taps)] +=
                      gradient.values[out];
                });
  return success();
}

/// The divisor of a window's sum in avg_pool2d.
static double windowCount(const PoolingWindow &window, bool includePadding,
                          ArrayRef<int64_t> taps) {
  return includePadding ? window.kernel[0] * window.kernel[1] : taps.size();
}

static LogicalResult avgPool2dKernel(AvgPool2dOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &input = *operands[0];
  PoolingWindow window = getPoolingWindow(op);
  forEachWindow(input.shape, results[0].shape, window,
                [&](int64_t out, ArrayRef<int64_t> taps) {
                  double sum = 0;
                  for (int64_t tap : taps)
                    sum += input.values[tap];
                  results[0].values[out] =
                      sum / windowCount(window, op.getCountIncludePad(), taps);
                });
  return success();
}

static LogicalResult avgPool2dGradKernel(AvgPool2dGradOp op,
                                         ArrayRef<const Tensor *> operands,
                                         MutableArrayRef<Tensor> results) {
  const Tensor &gradient = *operands[0];
  PoolingWindow window = getPoolingWindow(op);
  forEachWindow(results[0].shape, gradient.shape, window,
                [&](int64_t out, ArrayRef<int64_t> taps) {
                  double share =
                      gradient.values[out] /
                      windowCount(window, op.getCountIncludePad(), taps);
                  for (int64_t tap : taps)
                    results[0].values[tap] += share;
                });
  return success();
}

void mlir::parc::interp::attachConvolutionKernels(MLIRContext *context) {
  attachKernel<Conv2dOp, convolutionKernel<Conv2dOp, 2>>(context);
  attachKernel<Conv2dInputGradOp, convolutionKernel<Conv2dInputGradOp, 0>>(
      context);
  attachKernel<Conv2dWeightGradOp, convolutionKernel<Conv2dWeightGradOp, 1>>(
      context);
  attachKernel<MaxPool2dOp, maxPool2dKernel>(context);
  attachKernel<MaxPool2dGradOp, maxPool2dGradKernel>(context);
  attachKernel<AvgPool2dOp, avgPool2dKernel>(context);
  attachKernel<AvgPool2dGradOp, avgPool2dGradKernel>(context);
}
