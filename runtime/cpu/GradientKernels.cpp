//===- GradientKernels.cpp - the vector-Jacobian products autodiff emits --===//
//
// Each kernel mirrors lib/Interp/GradientKernels.cpp: operands are read as
// double, every sum (including the dgamma/dbeta, dk/dv and table-row sums
// over rows, queries and positions) is accumulated in double in the
// evaluator's order, and each result element is rounded once to f32.
// broadcast_to and slice_grad only move elements and accept any dtype.
//
//===----------------------------------------------------------------------===//

#include "core/ElementMath.h"
#include "cpu/Blocks.h"
#include "cpu/Dnnl.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"
#include "cpu/Rows.h"

#include "core/Fatal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

using namespace parcrt;

namespace {
const float *floats(const TensorRef &t) {
  return static_cast<const float *>(t.data);
}
float *mutableFloats(const TensorRef &t) {
  return static_cast<float *>(t.data);
}

/// Rounds `values` once to f32 into `out`.
void store(const std::vector<double> &values, const TensorRef &out) {
  float *to = mutableFloats(out);
  for (size_t i = 0; i < values.size(); ++i)
    to[i] = static_cast<float>(values[i]);
}

/// The size of the last dimension, and the rows before it.
int64_t lastDim(const TensorRef &t) { return t.rank ? t.shape[t.rank - 1] : 1; }
int64_t rowsOf(const TensorRef &t) {
  int64_t features = lastDim(t);
  return features ? t.numElements() / features : 0;
}
} // namespace

void cpu::broadcastTo(const TensorRef *t) {
  const TensorRef &in = t[0], &out = t[1];
  if (in.dtype != out.dtype)
    fatal(std::string("broadcast_to: the operand is ") + dtypeName(in.dtype) +
          " but the result is " + dtypeName(out.dtype));
  gatherStrided(in, 0, broadcastStrides(in, out).data(), out);
}

void cpu::sliceGrad(const TensorRef *t, const int64_t *offsets,
                    const int64_t *strides) {
  const TensorRef &in = t[0], &out = t[1];
  if (in.dtype != out.dtype)
    fatal(std::string("slice_grad: the operand is ") + dtypeName(in.dtype) +
          " but the result is " + dtypeName(out.dtype));
  std::vector<int64_t> outStrides = rowMajorStrides(out);
  int64_t base = 0;
  std::vector<int64_t> steps(in.rank);
  for (int dim = 0; dim < in.rank; ++dim) {
    base += offsets[dim] * outStrides[dim];
    steps[dim] = strides[dim] * outStrides[dim];
  }
  // All-zero bytes are 0 in every dtype.
  std::memset(out.data, 0, out.bytes());
  scatterStrided(in, base, steps.data(), out);
}

void cpu::activationGrad(Backend::Activation kind, const TensorRef *t) {
  requireF32("activation_grad", t, 3);
  const float *x = floats(t[0]), *g = floats(t[1]);
  float *out = mutableFloats(t[2]);
  int64_t count = t[2].numElements();
  if (std::optional<dnnl::Eltwise> f = dnnl::eltwiseOf(kind))
    return dnnl::eltwiseGrad(*f, x, g, out, count);
  parallelFor(count, elementGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = g[i] * math::activationDerivative<float>(kind, x[i]);
  });
}

void cpu::softmaxGrad(const TensorRef *t, int64_t axis) {
  requireF32("softmax_grad", t, 3);
  const float *y = floats(t[0]), *g = floats(t[1]);
  float *out = mutableFloats(t[2]);
  int64_t length = t[0].shape[axis];
  int64_t inner = innerBytes(t[0], axis) / sizeof(float);
  int64_t outer = outerCount(t[0], axis);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * length * inner + i;
      double dot = 0;
      for (int64_t n = 0; n < length; ++n)
        dot += double(y[base + n * inner]) * g[base + n * inner];
      for (int64_t n = 0; n < length; ++n) {
        int64_t at = base + n * inner;
        out[at] = static_cast<float>(double(y[at]) * (double(g[at]) - dot));
      }
    }
}

void cpu::layerNormGrad(const TensorRef *t, double epsilon) {
  requireF32("layer_norm_grad", t, 6);
  const float *x = floats(t[0]), *gamma = floats(t[1]), *g = floats(t[2]);
  float *dx = mutableFloats(t[3]);
  int64_t features = lastDim(t[0]), rows = rowsOf(t[0]);
  std::vector<double> xhat(features), dxhat(features), dgamma(features, 0.0),
      dbeta(features, 0.0);
  for (int64_t row = 0; row < rows; ++row) {
    const float *in = x + row * features;
    const float *grad = g + row * features;
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
      dxhat[n] = double(grad[n]) * gamma[n];
      dgamma[n] += grad[n] * xhat[n];
      dbeta[n] += grad[n];
      meanDxhat += dxhat[n];
      meanDxhatXhat += dxhat[n] * xhat[n];
    }
    meanDxhat /= features;
    meanDxhatXhat /= features;
    for (int64_t n = 0; n < features; ++n)
      dx[row * features + n] = static_cast<float>(
          rstd * (dxhat[n] - meanDxhat - xhat[n] * meanDxhatXhat));
  }
  store(dgamma, t[4]);
  store(dbeta, t[5]);
}

void cpu::rmsNormGrad(const TensorRef *t, double epsilon) {
  requireF32("rms_norm_grad", t, 5);
  const float *x = floats(t[0]), *gamma = floats(t[1]), *g = floats(t[2]);
  float *dx = mutableFloats(t[3]);
  int64_t features = lastDim(t[0]), rows = rowsOf(t[0]);
  std::vector<double> dgamma(features, 0.0), rowDx(features);
  for (int64_t row = 0; row < rows; ++row) {
    const float *in = x + row * features;
    const float *grad = g + row * features;
    double meanSquare = 0, dot = 0;
    for (int64_t n = 0; n < features; ++n) {
      meanSquare += double(in[n]) * in[n];
      dot += double(grad[n]) * gamma[n] * in[n];
    }
    meanSquare /= features;
    double r = 1.0 / std::sqrt(meanSquare + epsilon);
    for (int64_t n = 0; n < features; ++n) {
      dgamma[n] += double(grad[n]) * in[n] * r;
      rowDx[n] = r * grad[n] * gamma[n] - in[n] * r * r * r * dot / features;
    }
    // Written after the row is read, so dx may share memory with g or x.
    for (int64_t n = 0; n < features; ++n)
      dx[row * features + n] = static_cast<float>(rowDx[n]);
  }
  store(dgamma, t[4]);
}

void cpu::embeddingGrad(const TensorRef *t, bool hasShard) {
  const TensorRef &ids = t[0], &g = t[1], &table = t[hasShard ? 3 : 2];
  requireInteger("embedding_grad", "ids", ids);
  requireF32("embedding_grad", t + 1, 1);
  requireF32("embedding_grad", &table, 1);
  int64_t vocab = table.shape[0], dim = table.rank > 1 ? table.shape[1] : 1;
  int64_t offset = 0;
  if (hasShard) {
    requireInteger("embedding_grad", "the shard index", t[2]);
    offset = integerAt(t[2], 0) * vocab;
  }
  // Positions grouped by row, in position order within a row (a stable
  // sort): each row's elements are summed in double in the evaluator's
  // order without a double copy of the whole table.
  int64_t count = ids.numElements();
  std::vector<int64_t> rowOf(count), order;
  order.reserve(count);
  for (int64_t n = 0; n < count; ++n) {
    int64_t id = integerAt(ids, n) - offset;
    rowOf[n] = id;
    if (id >= 0 && id < vocab)
      order.push_back(n);
    else if (!hasShard)
      fatal("embedding_grad: ids element " + std::to_string(n) + " is " +
            std::to_string(integerAt(ids, n)) +
            ", outside the table's rows [0, " + std::to_string(vocab) + ")");
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return rowOf[a] < rowOf[b]; });
  std::memset(table.data, 0, table.bytes());
  const float *grad = floats(g);
  float *out = mutableFloats(table);
  std::vector<double> sum(dim);
  for (size_t first = 0; first < order.size();) {
    int64_t row = rowOf[order[first]];
    std::fill(sum.begin(), sum.end(), 0.0);
    size_t last = first;
    for (; last < order.size() && rowOf[order[last]] == row; ++last)
      for (int64_t d = 0; d < dim; ++d)
        sum[d] += grad[order[last] * dim + d];
    for (int64_t d = 0; d < dim; ++d)
      out[row * dim + d] = static_cast<float>(sum[d]);
    first = last;
  }
}

void cpu::crossEntropyGrad(const TensorRef *t, int64_t count, bool hasShard) {
  requireF32("cross_entropy_grad", t, 1);
  requireInteger("cross_entropy_grad", "labels", t[1]);
  requireF32("cross_entropy_grad", t + 2, 1);
  const TensorRef &out = t[hasShard ? 5 : 3];
  requireF32("cross_entropy_grad", &out, 1);
  if (hasShard)
    requireF32("cross_entropy_grad", t + 3, 1);
  if (count <= 0)
    fatal("cross_entropy_grad: count must be positive, not " +
          std::to_string(count));
  double scale = double(*floats(t[2])) / count;
  const float *logits = floats(t[0]);
  float *result = mutableFloats(out);
  int64_t classes = lastDim(t[0]);
  int64_t rows = t[1].numElements();
  // A vocab-parallel block: the normalizer is global, labels are shifted.
  const float *normalizer = hasShard ? floats(t[3]) : nullptr;
  int64_t offset =
      hasShard ? shardStart("cross_entropy_grad", t[4], classes) : 0;
  if (!hasShard)
    requireLabels("cross_entropy_grad", t[1], 0, classes);
  // The exponentials in place of the result (which may be the logits':
  // each row is read whole before it is written).
  std::vector<float> shifts(rows);
  if (hasShard)
    std::copy_n(normalizer, rows, shifts.data());
  else
    rowMaxima(logits, rows, classes, shifts.data());
  shiftedExp(logits, shifts.data(), rows, classes, result);
  parallelFor(rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t label = integerAt(t[1], row) - offset;
      float *y = result + row * classes;
      // The global normalizer already divides; a local sum would not.
      double total = hasShard ? 1 : 0;
      if (!hasShard)
        for (int64_t c = 0; c < classes; ++c)
          total += y[c];
      for (int64_t c = 0; c < classes; ++c)
        y[c] = static_cast<float>((y[c] / total - (c == label ? 1.0 : 0.0)) *
                                  scale);
    }
  });
}
