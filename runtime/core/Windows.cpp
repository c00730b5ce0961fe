//===- Windows.cpp - reading conv2d's and the poolings' geometry ----------===//

#include "core/Windows.h"

#include "core/Fatal.h"

#include <string>

using namespace parcrt;

namespace {
std::string shapeOf(const TensorRef &t) {
  std::string text = "[";
  for (int dim = 0; dim < t.rank; ++dim)
    text += (dim ? ", " : "") + std::to_string(t.shape[dim]);
  return text + "]";
}

/// Whether an axis of `size` padded by `before` and `after` gives `out`
/// positions of a `kernel` window with `stride` and `dilation`.
bool fits(int64_t size, int64_t before, int64_t after, int64_t kernel,
          int64_t stride, int64_t dilation, int64_t out) {
  // The sizes are the compiler's, checked there: no overflow here.
  int64_t padded = size + before + after;
  int64_t span = dilation * (kernel - 1) + 1;
  return kernel >= 1 && stride >= 1 && dilation >= 1 && before >= 0 &&
         after >= 0 && span <= padded && out == (padded - span) / stride + 1;
}
} // namespace

Window2d ConvolutionShape::getWindow() const {
  Window2d w;
  w.height = input[2];
  w.width = input[3];
  w.outHeight = output[2];
  w.outWidth = output[3];
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = weight[2 + i];
    w.strides[i] = strides[i];
    w.dilations[i] = dilations[i];
  }
  for (int i = 0; i < 4; ++i)
    w.padding[i] = padding[i];
  return w;
}

ConvolutionShape parcrt::readConvolution(const char *op, const TensorRef &input,
                                         const TensorRef &weight,
                                         const TensorRef &output,
                                         const int64_t *geometry) {
  auto mismatch = [&](const std::string &why) {
    fatal(std::string(op) + ": " + why + " (input " + shapeOf(input) +
          ", weight " + shapeOf(weight) + ", output " + shapeOf(output) + ")");
  };
  if (input.rank != 4 || weight.rank != 4 || output.rank != 4)
    mismatch("tensors must have rank 4");
  ConvolutionShape c;
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
  for (int i = 0; i < 2; ++i)
    if (!fits(c.input[2 + i], c.padding[i], c.padding[2 + i], c.weight[2 + i],
              c.strides[i], c.dilations[i], c.output[2 + i]))
      mismatch("the spatial sizes do not follow from the geometry");
  return c;
}

Window2d parcrt::readPoolingWindow(const char *op, const TensorRef &input,
                                   const TensorRef &output,
                                   const int64_t *ints) {
  bool agree = input.rank == 4 && output.rank == 4 &&
               output.shape[0] == input.shape[0] &&
               output.shape[1] == input.shape[1];
  Window2d w;
  if (agree) {
    w.height = input.shape[2];
    w.width = input.shape[3];
    w.outHeight = output.shape[2];
    w.outWidth = output.shape[3];
    for (int i = 0; i < 2; ++i) {
      w.kernel[i] = ints[i];
      w.strides[i] = ints[2 + i];
      w.dilations[i] = ints[8 + i];
    }
    for (int i = 0; i < 4; ++i)
      w.padding[i] = ints[4 + i];
  }
  int64_t sizes[2] = {w.height, w.width}, outs[2] = {w.outHeight, w.outWidth};
  // A pooling's padding is at most half its window (PyTorch's bound).
  for (int i = 0; agree && i < 2; ++i)
    agree = w.padding[i] <= w.kernel[i] / 2 &&
            w.padding[2 + i] <= w.kernel[i] / 2 &&
            fits(sizes[i], w.padding[i], w.padding[2 + i], w.kernel[i],
                 w.strides[i], w.dilations[i], outs[i]);
  if (!agree)
    fatal(std::string(op) +
          ": the tensors' shapes do not follow from the window");
  return w;
}
