//===- LinearAlgebraKernels.cpp - matmul ----------------------------------===//

#include "cpu/Blocks.h"
#include "cpu/Dnnl.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include <algorithm>

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
  if (transposeLhs && !transposeRhs) {
    cpu::dnnl::gemm(true, false, m, n, batches * k, 1.0f, lhs, lhsColumns, rhs,
                    rhsColumns, 0.0f, out, n);
    return;
  }
  if (batches == 0)
    std::fill(out, out + m * n, 0.0f);
  for (int64_t batch = 0; batch < batches; ++batch)
    cpu::dnnl::gemm(transposeLhs, transposeRhs, m, n, k, 1.0f,
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
  int64_t batches = Operand::batchCount(result);
  // [batch.., m, k] x [k, n]: the batches are rows of one GEMM.
  if (t[1].rank == 2 && !transposeLhs && !lhs.broadcast) {
    dnnl::gemm(false, transposeRhs, batches * m, n, k, 1.0f, lhs.data,
               lhs.columns, rhs.data, rhs.columns, 0.0f, out, n);
    return;
  }
  // Enough batches for every thread: one GEMM per thread at a time (each
  // on its own thread inside the parallel region); else threaded GEMMs.
  int64_t batchRank = result.rank - 2;
  auto multiply = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> index(batchRank);
    for (int64_t batch = begin; batch < end; ++batch) {
      for (int64_t dim = batchRank - 1, rest = batch; dim >= 0; --dim) {
        index[dim] = rest % result.shape[dim];
        rest /= result.shape[dim];
      }
      dnnl::gemm(transposeLhs, transposeRhs, m, n, k, 1.0f,
                 lhs.matrix(index.data()), lhs.columns,
                 rhs.matrix(index.data()), rhs.columns, 0.0f,
                 out + batch * m * n, n);
    }
  };
  if (batches >= threads())
    parallelFor(batches, 1, multiply);
  else
    multiply(0, batches);
}
