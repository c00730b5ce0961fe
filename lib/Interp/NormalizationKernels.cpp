//===- NormalizationKernels.cpp - softmax, layer_norm, rms_norm -----------===//

#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

/// Calls `body(offset, stride)` for every 1-D line of `shape` along `axis`;
/// element n of a line is at offset + n * stride.
template <typename Fn>
static void forEachLine(ArrayRef<int64_t> shape, int64_t axis, Fn body) {
  SmallVector<int64_t> strides = getRowMajorStrides(shape);
  SmallVector<int64_t> outer(shape);
  outer[axis] = 1;
  forEachIndex(outer, [&](ArrayRef<int64_t> index, int64_t) {
    int64_t offset = 0;
    for (auto [i, stride] : llvm::zip_equal(index, strides))
      offset += i * stride;
    body(offset, strides[axis]);
  });
}

static LogicalResult softmaxKernel(SoftmaxOp op,
                                   ArrayRef<const Tensor *> operands,
                                   MutableArrayRef<Tensor> results) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  int64_t axis = op.getAxis(), length = in.shape[axis];
  forEachLine(in.shape, axis, [&](int64_t offset, int64_t stride) {
    // Subtracting the maximum keeps exp() finite for large logits.
    double maxValue = -INFINITY;
    for (int64_t n = 0; n < length; ++n)
      maxValue = std::max(maxValue, in.values[offset + n * stride]);
    // A line of -inf (every key masked) is all zeros, not NaN.
    if (maxValue == -INFINITY) {
      for (int64_t n = 0; n < length; ++n)
        out.values[offset + n * stride] = 0.0;
      return;
    }
    double total = 0;
    for (int64_t n = 0; n < length; ++n) {
      double e = std::exp(in.values[offset + n * stride] - maxValue);
      out.values[offset + n * stride] = e;
      total += e;
    }
    for (int64_t n = 0; n < length; ++n)
      out.values[offset + n * stride] /= total;
  });
  return success();
}

static LogicalResult layerNormKernel(LayerNormOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &in = *operands[0], &gamma = *operands[1], &beta = *operands[2];
  Tensor &out = results[0];
  int64_t features = in.shape.back();
  double epsilon = op.getEpsilon().convertToDouble();
  for (int64_t row = 0; row < in.getNumElements() / features; ++row) {
    const double *x = &in.values[row * features];
    double mean = 0;
    for (int64_t n = 0; n < features; ++n)
      mean += x[n];
    mean /= features;
    double variance = 0;
    for (int64_t n = 0; n < features; ++n)
      variance += (x[n] - mean) * (x[n] - mean);
    variance /= features;
    double rstd = 1.0 / std::sqrt(variance + epsilon);
    for (int64_t n = 0; n < features; ++n)
      out.values[row * features + n] =
          (x[n] - mean) * rstd * gamma.values[n] + beta.values[n];
  }
  return success();
}

static LogicalResult rmsNormKernel(RmsNormOp op,
                                   ArrayRef<const Tensor *> operands,
                                   MutableArrayRef<Tensor> results) {
  const Tensor &in = *operands[0], &gamma = *operands[1];
  Tensor &out = results[0];
  int64_t features = in.shape.back();
  double epsilon = op.getEpsilon().convertToDouble();
  for (int64_t row = 0; row < in.getNumElements() / features; ++row) {
    const double *x = &in.values[row * features];
    double meanSquare = 0;
    for (int64_t n = 0; n < features; ++n)
      meanSquare += x[n] * x[n];
    meanSquare /= features;
    double rms = 1.0 / std::sqrt(meanSquare + epsilon);
    for (int64_t n = 0; n < features; ++n)
      out.values[row * features + n] = x[n] * rms * gamma.values[n];
  }
  return success();
}

void mlir::parc::interp::attachNormalizationKernels(MLIRContext *context) {
  attachKernel<SoftmaxOp, softmaxKernel>(context);
  attachKernel<LayerNormOp, layerNormKernel>(context);
  attachKernel<RmsNormOp, rmsNormKernel>(context);
}
