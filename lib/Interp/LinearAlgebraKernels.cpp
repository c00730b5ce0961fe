//===- LinearAlgebraKernels.cpp - matmul and attention --------------------===//

#include "AttentionScores.h"
#include "Kernels.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

namespace {
/// Addresses element (row, column) of one matrix in a batch of matrices,
/// optionally transposed, with the batch dimensions broadcast to `batch`.
/// The tensor's matrix groups (matrix_dims) count as one dimension each.
struct MatrixView {
  MatrixView(const Tensor &tensor, MatmulOp::OperandGroups groups,
             bool transposed, ArrayRef<int64_t> batch)
      : values(tensor.values.data()) {
    // Stored as [batch..., outer group, inner group]: a row spans the inner.
    int64_t inner = std::max(groups.firstStart, groups.secondStart);
    rowStride =
        getElementCount(ArrayRef<int64_t>(tensor.shape).drop_front(inner));
    columnStride = 1;
    if (transposed)
      std::swap(rowStride, columnStride);
    SmallVector<int64_t> strides = tensor.getStrides();
    int64_t offset = batch.size() - groups.batchRank;
    batchStrides.assign(batch.size(), 0);
    for (int64_t dim = 0; dim < groups.batchRank; ++dim)
      if (tensor.shape[dim] != 1)
        batchStrides[offset + dim] = strides[dim];
  }

  int64_t batchOffset(ArrayRef<int64_t> batchIndex) const {
    int64_t offset = 0;
    for (auto [i, stride] : llvm::zip_equal(batchIndex, batchStrides))
      offset += i * stride;
    return offset;
  }

  double get(int64_t base, int64_t row, int64_t column) const {
    return values[base + row * rowStride + column * columnStride];
  }

  /// A pointer, not an ArrayRef: the matmul's innermost loop reads through
  /// it, and the fuzzers' builds check every ArrayRef index.
  const double *values;
  int64_t rowStride, columnStride;
  SmallVector<int64_t> batchStrides;
};
} // namespace

static LogicalResult matmulKernel(MatmulOp op,
                                  ArrayRef<const Tensor *> operands,
                                  MutableArrayRef<Tensor> results) {
  Tensor &result = results[0];
  const Tensor &lhsTensor = *operands[0];
  MatmulOp::MatrixGroups groups = op.getMatrixGroups();
  MatmulOp::OperandGroups lhsGroups = op.getLhsGroups();
  // Under contract_batch every batch's product adds into one matrix.
  bool contract = op.getContractBatch();
  ArrayRef<int64_t> batch =
      contract
          ? ArrayRef<int64_t>(lhsTensor.shape).take_front(lhsGroups.batchRank)
          : ArrayRef<int64_t>(result.shape)
                .drop_back(groups.rows + groups.columns);
  ArrayRef<int64_t> matrix =
      ArrayRef<int64_t>(result.shape).take_back(groups.rows + groups.columns);
  int64_t rows = getElementCount(matrix.take_front(groups.rows)),
          columns = getElementCount(matrix.take_back(groups.columns));
  MatrixView lhs(lhsTensor, lhsGroups, op.getTransposeLhs(), batch);
  MatrixView rhs(*operands[1], op.getRhsGroups(), op.getTransposeRhs(), batch);
  int64_t depth =
      getElementCount(ArrayRef<int64_t>(lhsTensor.shape)
                          .slice(lhsGroups.secondStart, groups.contracting));
  int64_t matrixSize = rows * columns;
  std::fill(result.values.begin(), result.values.end(), 0.0);
  forEachIndex(batch, [&](ArrayRef<int64_t> batchIndex, int64_t batchLinear) {
    int64_t lhsBase = lhs.batchOffset(batchIndex);
    int64_t rhsBase = rhs.batchOffset(batchIndex);
    double *out =
        result.values.data() + (contract ? 0 : batchLinear * matrixSize);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < depth; ++k)
          sum += lhs.get(lhsBase, i, k) * rhs.get(rhsBase, k, j);
        out[i * columns + j] += sum;
      }
  });
  return success();
}

/// softmax(scale * q k^T + mask) v, one (batch, head) at a time.
static LogicalResult attentionKernel(AttentionOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &q = *operands[0], &k = *operands[1], &v = *operands[2];
  const Tensor *mask = op.getMask() ? operands[3] : nullptr;
  Tensor &out = results[0];
  AttentionScores scores(q, k, mask, op.getCausal(),
                         op.getScale().convertToDouble());
  int64_t valueDim = v.shape[3];
  for (int64_t b = 0; b < q.shape[0]; ++b)
    for (int64_t h = 0; h < q.shape[1]; ++h)
      for (int64_t i = 0; i < q.shape[2]; ++i) {
        const std::vector<double> &p = scores.probabilities(b, h, i);
        for (int64_t d = 0; d < valueDim; ++d) {
          double sum = 0;
          for (int64_t j = 0; j < scores.getVisible(); ++j)
            sum += p[j] * v.at({b, scores.kvHead(h), j, d});
          out.at({b, h, i, d}) = sum;
        }
      }
  return success();
}

void mlir::parc::interp::attachLinearAlgebraKernels(MLIRContext *context) {
  attachKernel<MatmulOp, matmulKernel>(context);
  attachKernel<AttentionOp, attentionKernel>(context);
}
