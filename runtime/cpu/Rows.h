//===- Rows.h - row-wise pieces of softmax-like kernels ----------*- C++
//-*-===//
//
// Cross-entropy and its gradient exponentiate every logit against its row's
// maximum (or a given normalizer): the subtraction and the row sums are
// parc's loops on the kernel threads, the exponentials oneDNN's vectorized
// eltwise primitive.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_ROWS_H
#define PARCRT_CPU_ROWS_H

#include <cstdint>

namespace parcrt::cpu {

/// maxima[r] = the largest of row r of x [rows, length] (-inf if empty).
void rowMaxima(const float *x, int64_t rows, int64_t length, float *maxima);

/// out[r, c] = exp(x[r, c] - shifts[r]) over x [rows, length]; out may be x.
void shiftedExp(const float *x, const float *shifts, int64_t rows,
                int64_t length, float *out);

} // namespace parcrt::cpu

#endif // PARCRT_CPU_ROWS_H
