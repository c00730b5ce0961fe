//===- LossKernels.cpp - cross_entropy ------------------------------------===//

#include "cpu/Kernels.h"
#include "cpu/Parallel.h"
#include "cpu/Rows.h"

#include "core/Fatal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace parcrt;

void cpu::crossEntropy(const TensorRef *t) {
  requireF32("cross_entropy", t, 1);
  requireF32("cross_entropy", t + 2, 1);
  requireInteger("cross_entropy", "labels", t[1]);
  const auto *logits = static_cast<const float *>(t[0].data);
  int64_t classes = t[0].shape[t[0].rank - 1];
  int64_t rows = t[1].numElements();
  requireLabels("cross_entropy", t[1], 0, classes);
  std::vector<double> normalizers(rows);
  rowLogSumExp(logits, rows, classes, normalizers.data());
  double total = 0;
  for (int64_t row = 0; row < rows; ++row)
    total += normalizers[row] - logits[row * classes + integerAt(t[1], row)];
  // The mean over no rows is NaN, as in PyTorch (and the evaluator).
  *static_cast<float *>(t[2].data) = static_cast<float>(
      rows > 0 ? total / rows : std::numeric_limits<double>::quiet_NaN());
}
