//===- Matrices.h - a grouped matmul's operands as batches of matrices ----===//
//
// parc.matmul's matrix_dims let m, k and n span several dimensions each; the
// backends' matmul takes one dimension each. Each group is contiguous and
// row-major, so merging it is a change of descriptor, not of data.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_MATRICES_H
#define PARCRT_CORE_MATRICES_H

#include "parcrt/Backend.h"

#include <array>
#include <cstdint>

namespace parcrt {

/// Views of lhs, rhs and result (`t`) with each matrix group merged into
/// one dimension; `ints` are the matmul's ([transpose_lhs, transpose_rhs,
/// contract_batch, rows, contracting, columns]). Stops the program on
/// groups its tensors cannot hold.
std::array<TensorRef, 3> matrixViews(const TensorRef *t, const int64_t *ints);

} // namespace parcrt

#endif // PARCRT_CORE_MATRICES_H
