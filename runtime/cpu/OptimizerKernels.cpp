//===- OptimizerKernels.cpp - AdamW, SGD and gradient clipping ------------===//
//
// The formulas of core/ElementMath.h in float, as the cuda kernels compute
// them (in double, AdamW's division and square root bound the step; the
// reference evaluator, lib/Interp/OptimizerKernels.cpp, stays in double).
// Every element
// is read before any result is written, so a result may share memory with
// the operand it replaces (param' with param, m' with m, ...).
//
//===----------------------------------------------------------------------===//

#include "core/ElementMath.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace parcrt;

/// Whether a skippable update's `skip` scalar (operand `index`) is set:
/// nonzero, NaN included. A skipped update's results are copies of its
/// state operands (`pairs`: operand, result), none where they share memory.
static bool skipped(const TensorRef *t, bool skippable, int index,
                    std::initializer_list<std::pair<int, int>> pairs) {
  if (!skippable || *static_cast<const float *>(t[index].data) == 0)
    return false;
  for (auto [operand, result] : pairs)
    if (t[operand].data != t[result].data)
      std::copy_n(static_cast<const float *>(t[operand].data),
                  t[operand].numElements(),
                  static_cast<float *>(t[result].data));
  return true;
}

void cpu::adamwUpdate(const TensorRef *t, bool skippable, double lr,
                      double beta1, double beta2, double epsilon,
                      double weightDecay) {
  int operands = skippable ? 6 : 5;
  requireF32("adamw_update", t, operands + 3);
  if (skipped(t, skippable, 5, {{0, 6}, {2, 7}, {3, 8}}))
    return;
  const auto *param = static_cast<const float *>(t[0].data);
  const auto *grad = static_cast<const float *>(t[1].data);
  const auto *first = static_cast<const float *>(t[2].data);
  const auto *second = static_cast<const float *>(t[3].data);
  // The step count t (1 for the first update).
  math::AdamWStep<float> constants =
      math::adamwStep<float>(lr, beta1, beta2, epsilon, weightDecay,
                             *static_cast<const float *>(t[4].data));
  auto *newParam = static_cast<float *>(t[operands].data);
  auto *newFirst = static_cast<float *>(t[operands + 1].data);
  auto *newSecond = static_cast<float *>(t[operands + 2].data);
  parallelFor(t[0].numElements(), elementGrain,
              [&](int64_t begin, int64_t end) {
  // Element i is read before it is written and nothing else is: no
  // dependence between iterations, in place or not.
#pragma omp simd
                for (int64_t i = begin; i < end; ++i) {
                  math::AdamWElement<float> next = math::adamwElement<float>(
                      param[i], grad[i], first[i], second[i], constants);
                  newParam[i] = next.param;
                  newFirst[i] = next.firstMoment;
                  newSecond[i] = next.secondMoment;
                }
              });
}

void cpu::sgdUpdate(const TensorRef *t, bool skippable, double lr,
                    double momentum) {
  int operands = skippable ? 4 : 3;
  requireF32("sgd_update", t, operands + 2);
  if (skipped(t, skippable, 3, {{0, 4}, {2, 5}}))
    return;
  const auto *param = static_cast<const float *>(t[0].data);
  const auto *grad = static_cast<const float *>(t[1].data);
  const auto *buffer = static_cast<const float *>(t[2].data);
  auto *newParam = static_cast<float *>(t[operands].data);
  auto *newBuffer = static_cast<float *>(t[operands + 1].data);
  auto rate = static_cast<float>(lr), keep = static_cast<float>(momentum);
  parallelFor(t[0].numElements(), elementGrain,
              [&](int64_t begin, int64_t end) {
#pragma omp simd
                for (int64_t i = begin; i < end; ++i) {
                  math::SgdElement<float> next = math::sgdElement<float>(
                      param[i], grad[i], buffer[i], rate, keep);
                  newParam[i] = next.param;
                  newBuffer[i] = next.buffer;
                }
              });
}

void cpu::clipCoefficient(const TensorRef *t, double maxNorm) {
  requireF32("clip_coefficient", t, 2);
  double norm = std::sqrt(double(*static_cast<const float *>(t[0].data)));
  *static_cast<float *>(t[1].data) =
      static_cast<float>(std::min(1.0, maxNorm / (norm + 1e-6)));
}
