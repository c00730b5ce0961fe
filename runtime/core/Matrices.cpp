//===- Matrices.cpp - a grouped matmul's operands as batches of matrices --===//

#include "core/Matrices.h"
#include "core/Fatal.h"

#include <string>

using namespace parcrt;

/// `t` with its last `outer + inner` dimensions merged into two.
static TensorRef mergeTrailing(const TensorRef &t, int64_t outer, int64_t inner,
                               const char *name) {
  if (outer < 1 || inner < 1 || outer + inner > t.rank)
    fatal(std::string("matmul: ") + name + " of rank " +
          std::to_string(t.rank) + " cannot hold matrix groups of " +
          std::to_string(outer) + " and " + std::to_string(inner) +
          " dimensions");
  TensorRef merged = t;
  int batchRank = t.rank - static_cast<int>(outer + inner);
  merged.rank = batchRank + 2;
  merged.shape[batchRank] = 1;
  merged.shape[batchRank + 1] = 1;
  for (int dim = batchRank; dim < t.rank; ++dim)
    merged.shape[dim < batchRank + outer ? batchRank : batchRank + 1] *=
        t.shape[dim];
  for (int dim = merged.rank; dim < t.rank; ++dim)
    merged.shape[dim] = 0;
  return merged;
}

std::array<TensorRef, 3> parcrt::matrixViews(const TensorRef *t,
                                             const int64_t *ints) {
  bool transposeLhs = ints[0] != 0, transposeRhs = ints[1] != 0;
  int64_t rows = ints[3], contracting = ints[4], columns = ints[5];
  return {transposeLhs ? mergeTrailing(t[0], contracting, rows, "lhs")
                       : mergeTrailing(t[0], rows, contracting, "lhs"),
          transposeRhs ? mergeTrailing(t[1], columns, contracting, "rhs")
                       : mergeTrailing(t[1], contracting, columns, "rhs"),
          mergeTrailing(t[2], rows, columns, "result")};
}
