//===- GradientKernels.cpp - reference kernels of the gradient ops --------===//

#include "AttentionScores.h"
#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

static LogicalResult broadcastToKernel(BroadcastToOp,
                                       ArrayRef<const Tensor *> operands,
                                       MutableArrayRef<Tensor> results) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  SmallVector<int64_t> strides = in.getStrides();
  int64_t offset = out.getRank() - in.getRank();
  forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t source = 0;
    for (int64_t dim = 0; dim < in.getRank(); ++dim)
      if (in.shape[dim] != 1)
        source += index[offset + dim] * strides[dim];
    out.values[linear] = in.values[source];
  });
  return success();
}

static LogicalResult sliceGradKernel(SliceGradOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  ArrayRef<int64_t> offsets = op.getOffsets(), strides = op.getStrides();
  forEachIndex(operands[0]->shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    SmallVector<int64_t> target(index.size());
    for (size_t dim = 0; dim < index.size(); ++dim)
      target[dim] = offsets[dim] + index[dim] * strides[dim];
    results[0].at(target) = operands[0]->values[linear];
  });
  return success();
}

/// d/dx of each activation.
static double derivative(ActivationKind kind, double x) {
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  switch (kind) {
  case ActivationKind::Relu:
    // At a NaN input the gradient passes, as PyTorch's threshold_backward.
    return x <= 0 ? 0.0 : 1.0;
  case ActivationKind::Sigmoid:
    return sigmoid(x) * (1 - sigmoid(x));
  case ActivationKind::Silu:
    return sigmoid(x) * (1 + x * (1 - sigmoid(x)));
  case ActivationKind::Tanh:
    return 1 - std::tanh(x) * std::tanh(x);
  case ActivationKind::GeluErf: {
    double cdf = 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
    double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    return cdf + x * pdf;
  }
  case ActivationKind::GeluTanh: {
    double c = std::sqrt(2.0 / M_PI);
    double inner = c * (x + 0.044715 * x * x * x);
    double t = std::tanh(inner);
    return 0.5 * (1 + t) +
           0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
  }
  }
  llvm_unreachable("unknown activation");
}

static LogicalResult activationGradKernel(ActivationGradOp op,
                                          ArrayRef<const Tensor *> operands,
                                          MutableArrayRef<Tensor> results) {
  for (auto [out, x, g] : llvm::zip_equal(results[0].values,
                                          operands[0]->values,
                                          operands[1]->values))
    out = g * derivative(op.getActivation(), x);
  return success();
}

static LogicalResult softmaxGradKernel(SoftmaxGradOp op,
                                       ArrayRef<const Tensor *> operands,
                                       MutableArrayRef<Tensor> results) {
  const Tensor &y = *operands[0], &g = *operands[1];
  int64_t axis = op.getAxis(), length = y.shape[axis];
  SmallVector<int64_t> strides = y.getStrides();
  SmallVector<int64_t> outer(y.shape);
  outer[axis] = 1;
  forEachIndex(outer, [&](ArrayRef<int64_t> index, int64_t) {
    int64_t base = 0;
    for (auto [i, stride] : llvm::zip_equal(index, strides))
      base += i * stride;
    double dot = 0;
    for (int64_t n = 0; n < length; ++n)
      dot += y.values[base + n * strides[axis]] *
             g.values[base + n * strides[axis]];
    for (int64_t n = 0; n < length; ++n) {
      int64_t at = base + n * strides[axis];
      results[0].values[at] = y.values[at] * (g.values[at] - dot);
    }
  });
  return success();
}

static LogicalResult layerNormGradKernel(LayerNormGradOp op,
                                         ArrayRef<const Tensor *> operands,
                                         MutableArrayRef<Tensor> results) {
  const Tensor &x = *operands[0], &gamma = *operands[1], &g = *operands[2];
  int64_t features = x.shape.back();
  double epsilon = op.getEpsilon().convertToDouble();
  std::vector<double> xhat(features), dxhat(features);
  for (int64_t row = 0; row < x.getNumElements() / features; ++row) {
    const double *in = &x.values[row * features];
    const double *grad = &g.values[row * features];
    double mean = 0, variance = 0;
    for (int64_t n = 0; n < features; ++n)
      mean += in[n];
    mean /= features;
    for (int64_t n = 0; n < features; ++n)
      variance += (in[n] - mean) * (in[n] - mean);
    variance /= features;
    double rstd = 1.0 / std::sqrt(variance + epsilon);
    double meanDxhat = 0, meanDxhatXhat = 0;
    for (int64_t n = 0; n < features; ++n) {
      xhat[n] = (in[n] - mean) * rstd;
      dxhat[n] = grad[n] * gamma.values[n];
      results[1].values[n] += grad[n] * xhat[n];
      results[2].values[n] += grad[n];
      meanDxhat += dxhat[n];
      meanDxhatXhat += dxhat[n] * xhat[n];
    }
    meanDxhat /= features;
    meanDxhatXhat /= features;
    for (int64_t n = 0; n < features; ++n)
      results[0].values[row * features + n] =
          rstd * (dxhat[n] - meanDxhat - xhat[n] * meanDxhatXhat);
  }
  return success();
}

static LogicalResult rmsNormGradKernel(RmsNormGradOp op,
                                       ArrayRef<const Tensor *> operands,
                                       MutableArrayRef<Tensor> results) {
  const Tensor &x = *operands[0], &gamma = *operands[1], &g = *operands[2];
  int64_t features = x.shape.back();
  double epsilon = op.getEpsilon().convertToDouble();
  for (int64_t row = 0; row < x.getNumElements() / features; ++row) {
    const double *in = &x.values[row * features];
    const double *grad = &g.values[row * features];
    double meanSquare = 0, dot = 0;
    for (int64_t n = 0; n < features; ++n) {
      meanSquare += in[n] * in[n];
      dot += grad[n] * gamma.values[n] * in[n];
    }
    meanSquare /= features;
    double r = 1.0 / std::sqrt(meanSquare + epsilon);
    for (int64_t n = 0; n < features; ++n) {
      results[1].values[n] += grad[n] * in[n] * r;
      results[0].values[row * features + n] =
          r * grad[n] * gamma.values[n] - in[n] * r * r * r * dot / features;
    }
  }
  return success();
}

static LogicalResult embeddingGradKernel(EmbeddingGradOp op,
                                         ArrayRef<const Tensor *> operands,
                                         MutableArrayRef<Tensor> results) {
  const Tensor &ids = *operands[0], &g = *operands[1];
  Tensor &table = results[0];
  int64_t vocab = table.shape[0], dim = table.shape[1];
  bool sliced = operands.size() > 2;
  double offset = sliced ? operands[2]->values[0] * vocab : 0.0;
  for (int64_t n = 0; n < ids.getNumElements(); ++n) {
    double id = ids.values[n] - offset;
    if (!(id >= 0 && id < vocab)) {
      if (sliced)
        continue;
      return op.emitOpError() << "ids element " << n << " is "
                              << static_cast<int64_t>(ids.values[n])
                              << ", outside the table's rows [0, " << vocab
                              << ")";
    }
    for (int64_t d = 0; d < dim; ++d)
      table.values[static_cast<int64_t>(id) * dim + d] += g.values[n * dim + d];
  }
  return success();
}

// Recomputes each query's attention weights p, then
//   dv_j += p_j g_i,  ds_j = p_j (g_i.v_j - sum_l p_l g_i.v_l),
//   dq_i += scale sum_j ds_j k_j,  dk_j += scale ds_j q_i,
// where k, v, dk and dv are those of the query head's key/value head.
static LogicalResult attentionGradKernel(AttentionGradOp op,
                                         ArrayRef<const Tensor *> operands,
                                         MutableArrayRef<Tensor> results) {
  const Tensor &q = *operands[0], &k = *operands[1], &v = *operands[2],
               &g = *operands[3];
  const Tensor *mask = op.getMask() ? operands[4] : nullptr;
  Tensor &dq = results[0], &dk = results[1], &dv = results[2];
  AttentionScores scores(q, k, mask, op.getCausal(),
                         op.getScale().convertToDouble());
  double scale = op.getScale().convertToDouble();
  int64_t headDim = q.shape[3], valueDim = v.shape[3];
  std::vector<double> dp(k.shape[2]);
  for (int64_t b = 0; b < q.shape[0]; ++b)
    for (int64_t h = 0; h < q.shape[1]; ++h)
      for (int64_t i = 0; i < q.shape[2]; ++i) {
        const std::vector<double> &p = scores.probabilities(b, h, i);
        int64_t kv = scores.kvHead(h);
        double weighted = 0;
        for (int64_t j = 0; j < scores.getVisible(); ++j) {
          dp[j] = 0;
          for (int64_t e = 0; e < valueDim; ++e) {
            dv.at({b, kv, j, e}) += p[j] * g.at({b, h, i, e});
            dp[j] += g.at({b, h, i, e}) * v.at({b, kv, j, e});
          }
          weighted += p[j] * dp[j];
        }
        for (int64_t j = 0; j < scores.getVisible(); ++j) {
          double ds = p[j] * (dp[j] - weighted) * scale;
          for (int64_t d = 0; d < headDim; ++d) {
            dq.at({b, h, i, d}) += ds * k.at({b, kv, j, d});
            dk.at({b, kv, j, d}) += ds * q.at({b, h, i, d});
          }
        }
      }
  return success();
}

static LogicalResult crossEntropyGradKernel(CrossEntropyGradOp op,
                                            ArrayRef<const Tensor *> operands,
                                            MutableArrayRef<Tensor> results) {
  const Tensor &logits = *operands[0], &labels = *operands[1];
  double scale = operands[2]->values[0] / op.getCount();
  int64_t classes = logits.shape.back();
  // A vocab-parallel block: the normalizer is global, labels are shifted.
  const Tensor *normalizer = op.getNormalizer() ? operands[3] : nullptr;
  double offset = normalizer ? operands[4]->values[0] * classes : 0.0;
  for (int64_t row = 0; row < labels.getNumElements(); ++row) {
    double label = labels.values[row] - offset;
    if (!normalizer && failed(checkLabel(op, row, label, classes)))
      return failure();
    const double *x = &logits.values[row * classes];
    double *out = &results[0].values[row * classes];
    double logTotal;
    if (normalizer) {
      logTotal = normalizer->values[row];
    } else {
      double maxValue = *std::max_element(x, x + classes), total = 0;
      for (int64_t c = 0; c < classes; ++c)
        total += std::exp(x[c] - maxValue);
      logTotal = maxValue + std::log(total);
    }
    for (int64_t c = 0; c < classes; ++c)
      out[c] = (std::exp(x[c] - logTotal) - (c == label ? 1.0 : 0.0)) * scale;
  }
  return success();
}

void mlir::parc::interp::attachGradientKernels(MLIRContext *context) {
  attachKernel<BroadcastToOp, broadcastToKernel>(context);
  attachKernel<SliceGradOp, sliceGradKernel>(context);
  attachKernel<ActivationGradOp, activationGradKernel>(context);
  attachKernel<SoftmaxGradOp, softmaxGradKernel>(context);
  attachKernel<LayerNormGradOp, layerNormGradKernel>(context);
  attachKernel<RmsNormGradOp, rmsNormGradKernel>(context);
  attachKernel<EmbeddingGradOp, embeddingGradKernel>(context);
  attachKernel<AttentionGradOp, attentionGradKernel>(context);
  attachKernel<CrossEntropyGradOp, crossEntropyGradKernel>(context);
}
