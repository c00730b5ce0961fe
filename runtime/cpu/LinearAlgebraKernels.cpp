//===- LinearAlgebraKernels.cpp - matmul and attention --------------------===//

#include "core/ElementMath.h"
#include "cpu/Blocks.h"
#include "cpu/Kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

using namespace parcrt;

namespace {
/// One operand of a batched matmul: its matrix shape as stored and the
/// element offset of each result batch's matrix (batch broadcasting).
struct Operand {
  Operand(const TensorRef &t, const TensorRef &result)
      : data(static_cast<const float *>(t.data)), rows(t.shape[t.rank - 2]),
        columns(t.shape[t.rank - 1]) {
    std::vector<int64_t> own = cpu::rowMajorStrides(t);
    int batchRank = result.rank - 2;
    strides.assign(batchRank, 0);
    int offset = batchRank - (t.rank - 2);
    for (int dim = 0; dim < t.rank - 2; ++dim)
      if (t.shape[dim] != 1)
        strides[offset + dim] = own[dim];
    broadcast = t.numElements() != rows * columns * batchCount(result);
  }

  static int64_t batchCount(const TensorRef &result) {
    return cpu::outerCount(result, result.rank - 2);
  }

  const float *matrix(const int64_t *batchIndex) const {
    int64_t offset = 0;
    for (size_t dim = 0; dim < strides.size(); ++dim)
      offset += batchIndex[dim] * strides[dim];
    return data + offset;
  }

  const float *data;
  int64_t rows, columns;
  std::vector<int64_t> strides;
  /// Whether some result batches share this operand's matrices.
  bool broadcast;
};
} // namespace

/// contract_batch: every batch's product adds into the one result matrix.
/// A transposed lhs with a plain rhs (a weight's gradient, A^T g) is one
/// GEMM whose depth runs over batch and rows together.
static void matmulContractingBatch(const TensorRef *t, bool transposeLhs,
                                   bool transposeRhs) {
  const TensorRef &lhsRef = t[0], &rhsRef = t[1], &result = t[2];
  int64_t batches = cpu::outerCount(lhsRef, lhsRef.rank - 2);
  int64_t lhsRows = lhsRef.shape[lhsRef.rank - 2],
          lhsColumns = lhsRef.shape[lhsRef.rank - 1];
  int64_t rhsRows = rhsRef.shape[rhsRef.rank - 2],
          rhsColumns = rhsRef.shape[rhsRef.rank - 1];
  int64_t m = result.shape[0], n = result.shape[1];
  int64_t k = transposeLhs ? lhsRows : lhsColumns;
  const auto *lhs = static_cast<const float *>(lhsRef.data);
  const auto *rhs = static_cast<const float *>(rhsRef.data);
  auto *out = static_cast<float *>(result.data);
  CBLAS_TRANSPOSE lhsOp = transposeLhs ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE rhsOp = transposeRhs ? CblasTrans : CblasNoTrans;
  if (transposeLhs && !transposeRhs) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, batches * k,
                1.0f, lhs, lhsColumns, rhs, rhsColumns, 0.0f, out, n);
    return;
  }
  if (batches == 0)
    std::fill(out, out + m * n, 0.0f);
  for (int64_t batch = 0; batch < batches; ++batch)
    cblas_sgemm(CblasRowMajor, lhsOp, rhsOp, m, n, k, 1.0f,
                lhs + batch * lhsRows * lhsColumns, lhsColumns,
                rhs + batch * rhsRows * rhsColumns, rhsColumns,
                batch == 0 ? 0.0f : 1.0f, out, n);
}

void cpu::matmul(const TensorRef *t, bool transposeLhs, bool transposeRhs,
                 bool contractBatch) {
  requireF32("matmul", t, 3);
  if (contractBatch)
    return matmulContractingBatch(t, transposeLhs, transposeRhs);
  const TensorRef &result = t[2];
  Operand lhs(t[0], result), rhs(t[1], result);
  int64_t m = result.shape[result.rank - 2], n = result.shape[result.rank - 1];
  int64_t k = transposeLhs ? lhs.rows : lhs.columns;
  auto *out = static_cast<float *>(result.data);
  CBLAS_TRANSPOSE lhsOp = transposeLhs ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE rhsOp = transposeRhs ? CblasTrans : CblasNoTrans;
  int64_t batches = Operand::batchCount(result);
  // [batch.., m, k] x [k, n]: the batches are rows of one GEMM.
  if (t[1].rank == 2 && !transposeLhs && !lhs.broadcast) {
    cblas_sgemm(CblasRowMajor, lhsOp, rhsOp, batches * m, n, k, 1.0f, lhs.data,
                lhs.columns, rhs.data, rhs.columns, 0.0f, out, n);
    return;
  }
  forEachIndex(result.shape, result.rank - 2,
               [&](const int64_t *batchIndex, int64_t batch) {
                 cblas_sgemm(CblasRowMajor, lhsOp, rhsOp, m, n, k, 1.0f,
                             lhs.matrix(batchIndex), lhs.columns,
                             rhs.matrix(batchIndex), rhs.columns, 0.0f,
                             out + batch * m * n, n);
               });
}

void cpu::attention(const TensorRef *t, bool causal, bool hasMask,
                    double scale) {
  const TensorRef &out = t[hasMask ? 4 : 3];
  requireF32("attention", t, hasMask ? 4 : 3);
  requireF32("attention", &out, 1);
  math::AttentionShape shape =
      math::attentionShape(t[0], t[1], t[2], hasMask ? &t[3] : nullptr);
  const auto *q = static_cast<const float *>(t[0].data);
  const auto *k = static_cast<const float *>(t[1].data);
  const auto *v = static_cast<const float *>(t[2].data);
  auto *result = static_cast<float *>(out.data);
  int64_t queries = shape.queries, keys = shape.keys, headDim = shape.headDim,
          valueDim = shape.valueDim;
  std::vector<double> scores(keys), sums(valueDim);
  for (int64_t head = 0; head < shape.batch * shape.heads; ++head) {
    const float *qs = q + head * queries * headDim;
    const float *ks = k + shape.kvHeadOf(head) * keys * headDim;
    const float *vs = v + shape.kvHeadOf(head) * keys * valueDim;
    float *os = result + head * queries * valueDim;
    for (int64_t i = 0; i < queries; ++i) {
      int64_t visible = math::visibleKeys(causal, i, queries, keys);
      const float *maskRow = shape.maskRow(head, i);
      double maxScore = -INFINITY;
      for (int64_t j = 0; j < visible; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < headDim; ++d)
          dot += double(qs[i * headDim + d]) * ks[j * headDim + d];
        scores[j] = scale * dot + (maskRow ? maskRow[j] : 0.0);
        maxScore = std::max(maxScore, scores[j]);
      }
      // A query that sees no key, or only -inf scores, outputs 0.
      if (maxScore == -INFINITY) {
        std::fill(os + i * valueDim, os + (i + 1) * valueDim, 0.0f);
        continue;
      }
      double total = 0;
      for (int64_t j = 0; j < visible; ++j) {
        scores[j] = std::exp(scores[j] - maxScore);
        total += scores[j];
      }
      std::fill(sums.begin(), sums.end(), 0.0);
      for (int64_t j = 0; j < visible; ++j)
        for (int64_t d = 0; d < valueDim; ++d)
          sums[d] += scores[j] * vs[j * valueDim + d];
      for (int64_t d = 0; d < valueDim; ++d)
        os[i * valueDim + d] = static_cast<float>(sums[d] / total);
    }
  }
}
