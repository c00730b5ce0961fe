//===- AttentionKernels.cpp - attention and its gradient ------------------===//
//
// Both passes work on blocks of query rows of one head, as flash attention
// does, so that no [queries, keys] matrix per head is ever held: a block's
// scores come from one GEMM over the keys it can see (a causal block stops
// at its last query's key), its softmax is taken row by row, and the
// products with the values (and in the gradient with the keys and queries)
// are GEMMs again. The forward pass runs blocks of all heads in parallel;
// the gradient runs key/value heads in parallel, each summing its keys' and
// values' gradients over its query heads and blocks.
//
//===----------------------------------------------------------------------===//

#include "core/ElementMath.h"
#include "cpu/Dnnl.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace parcrt;

/// Query rows per block: a block's scores stay in the core's cache.
static constexpr int64_t blockRows = 64;

namespace {
/// One attention call's operands, shape and options.
struct Attention {
  math::AttentionShape shape;
  bool causal;
  float scale;
  const float *q, *k, *v;

  int64_t blocks() const { return (shape.queries + blockRows - 1) / blockRows; }
  /// The keys block `block`'s queries see between them: those of its last.
  int64_t blockKeys(int64_t block) const {
    int64_t last = std::min(shape.queries, (block + 1) * blockRows) - 1;
    return math::visibleKeys(causal, last, shape.queries, shape.keys);
  }
  const float *queries(int64_t head) const {
    return q + head * shape.queries * shape.headDim;
  }
  const float *keysOf(int64_t head) const {
    return k + shape.kvHeadOf(head) * shape.keys * shape.headDim;
  }
  const float *valuesOf(int64_t head) const {
    return v + shape.kvHeadOf(head) * shape.keys * shape.valueDim;
  }

  /// p [rows, width] = the attention probabilities of block `block` of
  /// query head `head` over its `width` = blockKeys(block) keys; a query's
  /// keys beyond those it sees, and every key of a query that sees none
  /// (or only -inf scores), get 0.
  void probabilities(int64_t head, int64_t block, float *p) const {
    int64_t first = block * blockRows,
            rows = std::min(blockRows, shape.queries - first),
            width = blockKeys(block), headDim = shape.headDim;
    cpu::dnnl::gemm(false, true, rows, width, headDim, scale,
                    queries(head) + first * headDim, headDim, keysOf(head),
                    headDim, 0.0f, p, width);
    // Each row shifted by its maximum, the keys it does not see at -inf;
    // then oneDNN's exp over the block, then each row normalized.
    for (int64_t r = 0; r < rows; ++r) {
      float *row = p + r * width;
      int64_t visible =
          math::visibleKeys(causal, first + r, shape.queries, shape.keys);
      if (const float *mask = shape.maskRow(head, first + r))
        for (int64_t j = 0; j < visible; ++j)
          row[j] += mask[j];
      float maximum = -INFINITY;
      for (int64_t j = 0; j < visible; ++j)
        maximum = std::max(maximum, row[j]);
      if (maximum == -INFINITY)
        visible = 0;
      for (int64_t j = 0; j < visible; ++j)
        row[j] -= maximum;
      std::fill(row + visible, row + width, -INFINITY);
    }
    cpu::dnnl::eltwise({::dnnl::algorithm::eltwise_exp}, p, p, rows * width);
    for (int64_t r = 0; r < rows; ++r) {
      float *row = p + r * width, total = 0;
      for (int64_t j = 0; j < width; ++j)
        total += row[j];
      // A query that sees no key (or only -inf scores) keeps all zeros.
      if (total != 0)
        for (int64_t j = 0; j < width; ++j)
          row[j] /= total;
    }
  }
};

/// Attention over q, k, v = t[0, 3) and `mask` (or none).
Attention makeAttention(const TensorRef *t, const TensorRef *mask, bool causal,
                        double scale) {
  return {math::attentionShape(t[0], t[1], t[2], mask),
          causal,
          static_cast<float>(scale),
          static_cast<const float *>(t[0].data),
          static_cast<const float *>(t[1].data),
          static_cast<const float *>(t[2].data)};
}
} // namespace

void cpu::attention(const TensorRef *t, bool causal, bool hasMask,
                    double scale) {
  const TensorRef &out = t[hasMask ? 4 : 3];
  requireF32("attention", t, hasMask ? 4 : 3);
  requireF32("attention", &out, 1);
  Attention attention =
      makeAttention(t, hasMask ? &t[3] : nullptr, causal, scale);
  const math::AttentionShape &shape = attention.shape;
  auto *result = static_cast<float *>(out.data);
  int64_t blocks = attention.blocks(), valueDim = shape.valueDim;
  parallelFor(
      shape.batch * shape.heads * blocks, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> p(blockRows * shape.keys);
        for (int64_t task = begin; task < end; ++task) {
          int64_t head = task / blocks, block = task % blocks;
          int64_t first = block * blockRows,
                  rows = std::min(blockRows, shape.queries - first),
                  width = attention.blockKeys(block);
          float *os = result + (head * shape.queries + first) * valueDim;
          if (width == 0) {
            std::fill(os, os + rows * valueDim, 0.0f);
            continue;
          }
          attention.probabilities(head, block, p.data());
          dnnl::gemm(false, false, rows, valueDim, width, 1.0f, p.data(), width,
                     attention.valuesOf(head), valueDim, 0.0f, os, valueDim);
        }
      });
}

void cpu::attentionGrad(const TensorRef *t, bool causal, bool hasMask,
                        double scale) {
  requireF32("attention_grad", t, hasMask ? 8 : 7);
  const TensorRef *results = t + (hasMask ? 5 : 4);
  // t: q, k, v, the output's gradient, the mask where there is one.
  Attention attention =
      makeAttention(t, hasMask ? &t[4] : nullptr, causal, scale);
  const math::AttentionShape &shape = attention.shape;
  const auto *g = static_cast<const float *>(t[3].data);
  auto *dq = static_cast<float *>(results[0].data);
  auto *dk = static_cast<float *>(results[1].data);
  auto *dv = static_cast<float *>(results[2].data);
  int64_t queries = shape.queries, keys = shape.keys, headDim = shape.headDim,
          valueDim = shape.valueDim, blocks = attention.blocks(),
          group = shape.kvHeads ? shape.heads / shape.kvHeads : 0;
  parallelFor(shape.batch * shape.kvHeads, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> p(blockRows * keys), dp(blockRows * keys);
    for (int64_t kvHead = begin; kvHead < end; ++kvHead) {
      float *dks = dk + kvHead * keys * headDim;
      float *dvs = dv + kvHead * keys * valueDim;
      std::fill(dks, dks + keys * headDim, 0.0f);
      std::fill(dvs, dvs + keys * valueDim, 0.0f);
      int64_t firstHead = shape.firstHeadOf(kvHead);
      for (int64_t head = firstHead; head < firstHead + group; ++head) {
        const float *ks = attention.keysOf(head);
        const float *vs = attention.valuesOf(head);
        for (int64_t block = 0; block < blocks; ++block) {
          int64_t first = block * blockRows,
                  rows = std::min(blockRows, queries - first),
                  width = attention.blockKeys(block);
          const float *qs = attention.queries(head) + first * headDim;
          const float *gs = g + (head * queries + first) * valueDim;
          float *dqs = dq + (head * queries + first) * headDim;
          if (width == 0) {
            std::fill(dqs, dqs + rows * headDim, 0.0f);
            continue;
          }
          attention.probabilities(head, block, p.data());
          // dV += P^T dO; dP = dO V^T.
          dnnl::gemm(true, false, width, valueDim, rows, 1.0f, p.data(), width,
                     gs, valueDim, 1.0f, dvs, valueDim);
          dnnl::gemm(false, true, rows, width, valueDim, 1.0f, gs, valueDim, vs,
                     valueDim, 0.0f, dp.data(), width);
          // dS = P (dP - rowsum(P dP)) scale, in place of dP.
          for (int64_t r = 0; r < rows; ++r) {
            const float *pr = p.data() + r * width;
            float *ds = dp.data() + r * width;
            float weighted = 0;
            for (int64_t j = 0; j < width; ++j)
              weighted += pr[j] * ds[j];
            for (int64_t j = 0; j < width; ++j)
              ds[j] = pr[j] * (ds[j] - weighted) * attention.scale;
          }
          // dQ = dS K; dK += dS^T Q.
          dnnl::gemm(false, false, rows, headDim, width, 1.0f, dp.data(), width,
                     ks, headDim, 0.0f, dqs, headDim);
          dnnl::gemm(true, false, width, headDim, rows, 1.0f, dp.data(), width,
                     qs, headDim, 1.0f, dks, headDim);
        }
      }
    }
  });
}
