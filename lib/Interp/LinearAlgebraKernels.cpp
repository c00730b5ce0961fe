//===- LinearAlgebraKernels.cpp - matmul and attention --------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

namespace {
/// Addresses element (row, column) of one matrix in a batch of matrices,
/// optionally transposed, with the batch dimensions broadcast to `batch`.
struct MatrixView {
  MatrixView(const Tensor &tensor, bool transposed, ArrayRef<int64_t> batch)
      : tensor(tensor), transposed(transposed) {
    int64_t rank = tensor.getRank();
    SmallVector<int64_t> strides = tensor.getStrides();
    rowStride = strides[rank - 2];
    columnStride = strides[rank - 1];
    if (transposed)
      std::swap(rowStride, columnStride);
    int64_t offset = batch.size() - (rank - 2);
    batchStrides.assign(batch.size(), 0);
    for (int64_t dim = 0; dim < rank - 2; ++dim)
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
    return tensor.values[base + row * rowStride + column * columnStride];
  }

  const Tensor &tensor;
  bool transposed;
  int64_t rowStride, columnStride;
  SmallVector<int64_t> batchStrides;
};
} // namespace

static LogicalResult matmulKernel(MatmulOp op,
                                  ArrayRef<const Tensor *> operands,
                                  MutableArrayRef<Tensor> results) {
  Tensor &result = results[0];
  const Tensor &lhsTensor = *operands[0];
  int64_t rank = result.getRank();
  // Under contract_batch every batch's product adds into one matrix.
  bool contract = op.getContractBatch();
  ArrayRef<int64_t> batch =
      ArrayRef<int64_t>(contract ? lhsTensor.shape : result.shape).drop_back(2);
  int64_t rows = result.shape[rank - 2], columns = result.shape[rank - 1];
  MatrixView lhs(lhsTensor, op.getTransposeLhs(), batch);
  MatrixView rhs(*operands[1], op.getTransposeRhs(), batch);
  int64_t depth = op.getTransposeLhs() ? lhsTensor.shape[lhsTensor.getRank() - 2]
                                       : lhsTensor.shape.back();
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

/// softmax(scale * q k^T + causal mask) v, one (batch, head) at a time.
static LogicalResult attentionKernel(AttentionOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &q = *operands[0], &k = *operands[1], &v = *operands[2];
  Tensor &out = results[0];
  int64_t batch = q.shape[0], heads = q.shape[1], queries = q.shape[2],
          headDim = q.shape[3], keys = k.shape[2], valueDim = v.shape[3];
  double scale = op.getScale().convertToDouble();
  // Queries align with the last `queries` keys, so query i sees keys
  // j <= i + (keys - queries).
  int64_t shift = keys - queries;
  std::vector<double> scores(keys);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < queries; ++i) {
        int64_t visible = op.getCausal() ? std::min(keys, i + shift + 1) : keys;
        double maxScore = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < headDim; ++d)
            dot += q.at({b, h, i, d}) * k.at({b, h, j, d});
          scores[j] = scale * dot;
          maxScore = std::max(maxScore, scores[j]);
        }
        double total = 0;
        for (int64_t j = 0; j < visible; ++j) {
          scores[j] = std::exp(scores[j] - maxScore);
          total += scores[j];
        }
        for (int64_t d = 0; d < valueDim; ++d) {
          double sum = 0;
          for (int64_t j = 0; j < visible; ++j)
            sum += scores[j] * v.at({b, h, j, d});
          // A query that sees no key (more queries than keys) outputs 0.
          out.at({b, h, i, d}) = visible > 0 ? sum / total : 0.0;
        }
      }
  return success();
}

void mlir::parc::interp::attachLinearAlgebraKernels(MLIRContext *context) {
  attachKernel<MatmulOp, matmulKernel>(context);
  attachKernel<AttentionOp, attentionKernel>(context);
}
