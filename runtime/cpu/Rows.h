//===- Rows.h - row-wise pieces of softmax-like kernels ---------*- C++ -*-===//
//
// Cross-entropy, its gradient and log-sum-exp exponentiate every logit
// against its row's maximum (or a given normalizer): the subtraction and the
// row sums are parc's loops on the kernel threads, the exponentials oneDNN's
// vectorized eltwise primitive.
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

/// out[r] = log(sum over c of exp(x[r, c])) for x [rows, length], shifted
/// by each row's maximum (exponentials in f32, their sums in double); a row
/// whose maximum is not finite (all -inf, or an inf) gives that maximum.
void rowLogSumExp(const float *x, int64_t rows, int64_t length, double *out);

} // namespace parcrt::cpu

#endif // PARCRT_CPU_ROWS_H
