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

namespace {
/// A [N, C, ...] tensor's batch in `groups` equal groups: the mean and the
/// reciprocal standard deviation (of the biased variance) of each group's
/// channels, and the unbiased variance that updates the running one.
struct BatchNormStatistics {
  int64_t batch, channels, plane, groups;
  std::vector<double> mean, rstd, unbiased; // [groups, channels]

  BatchNormStatistics(const Tensor &x, int64_t groups, double epsilon)
      : batch(x.shape[0]), channels(x.shape[1]),
        plane(x.getNumElements() / (batch * channels)), groups(groups),
        mean(groups * channels), rstd(groups * channels),
        unbiased(groups * channels) {
    double count = double(getGroupSize()) * plane;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0, squares = 0;
        forEach(g, c, [&](int64_t i) { sum += x.values[i]; });
        double m = sum / count;
        forEach(g, c, [&](int64_t i) {
          squares += (x.values[i] - m) * (x.values[i] - m);
        });
        mean[g * channels + c] = m;
        rstd[g * channels + c] = 1.0 / std::sqrt(squares / count + epsilon);
        unbiased[g * channels + c] = squares / (count - 1);
      }
  }

  int64_t getGroupSize() const { return batch / groups; }
  /// Calls `body(g, c, mean, rstd)` for each group's channel.
  template <typename Body> void forEachChannel(Body body) const {
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t c = 0; c < channels; ++c)
        body(g, c, mean[g * channels + c], rstd[g * channels + c]);
  }
  /// Calls `body` with the index of each element of group g's channel c.
  template <typename Body> void forEach(int64_t g, int64_t c, Body body) const {
    for (int64_t n = g * getGroupSize(); n < (g + 1) * getGroupSize(); ++n)
      for (int64_t p = 0; p < plane; ++p)
        body((n * channels + c) * plane + p);
  }
};
} // namespace

static LogicalResult batchNormKernel(BatchNormOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &x = *operands[0], &gamma = *operands[1], &beta = *operands[2];
  BatchNormStatistics stats(x, op.getGroups(),
                            op.getEpsilon().convertToDouble());
  stats.forEachChannel([&](int64_t g, int64_t c, double m, double rstd) {
    double scale = rstd * gamma.values[c];
    stats.forEach(g, c, [&](int64_t i) {
      results[0].values[i] = (x.values[i] - m) * scale + beta.values[c];
    });
  });
  for (int64_t c = 0; c < stats.channels; ++c) {
    results[1].values[c] = stats.mean[c];
    results[2].values[c] = stats.unbiased[c];
  }
  return success();
}

static LogicalResult batchNormGradKernel(BatchNormGradOp op,
                                         ArrayRef<const Tensor *> operands,
                                         MutableArrayRef<Tensor> results) {
  const Tensor &x = *operands[0], &gamma = *operands[1], &dy = *operands[2];
  BatchNormStatistics stats(x, op.getGroups(),
                            op.getEpsilon().convertToDouble());
  double count = double(stats.getGroupSize()) * stats.plane;
  stats.forEachChannel([&](int64_t g, int64_t c, double m, double rstd) {
    double sumGradient = 0, sumGradientXhat = 0;
      stats.forEach(g, c, [&](int64_t i) {
        sumGradient += dy.values[i];
        sumGradientXhat += dy.values[i] * (x.values[i] - m) * rstd;
      });
      results[1].values[c] += sumGradientXhat;
      results[2].values[c] += sumGradient;
      // dx = gamma rstd (dy - mean(dy) - xhat mean(dy xhat)).
      stats.forEach(g, c, [&](int64_t i) {
        double xhat = (x.values[i] - m) * rstd;
        results[0].values[i] = gamma.values[c] * rstd *
                               (dy.values[i] - sumGradient / count -
                                xhat * sumGradientXhat / count);
      });
  });
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
  attachKernel<BatchNormOp, batchNormKernel>(context);
  attachKernel<BatchNormGradOp, batchNormGradKernel>(context);
}
