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
  // Chunks of rows through one scratch block of about 2^20 exponentials;
  // each row's loss on some thread, their sum in row order.
  int64_t chunk =
      std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(classes, 1));
  std::vector<float> maxima(std::min(chunk, rows)),
      exps(std::min(chunk, rows) * classes);
  double total = 0;
  for (int64_t first = 0; first < rows; first += chunk) {
    int64_t count = std::min(chunk, rows - first);
    const float *x = logits + first * classes;
    rowMaxima(x, count, classes, maxima.data());
    shiftedExp(x, maxima.data(), count, classes, exps.data());
    std::vector<double> losses(count);
    parallelFor(count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          sum += exps[r * classes + c];
        losses[r] = maxima[r] + std::log(sum) -
                    x[r * classes + integerAt(t[1], first + r)];
      }
    });
    for (double loss : losses)
      total += loss;
  }
  // The mean over no rows is NaN, as in PyTorch (and the evaluator).
  *static_cast<float *>(t[2].data) = static_cast<float>(
      rows > 0 ? total / rows : std::numeric_limits<double>::quiet_NaN());
}
