//===- OptimizerKernels.cpp - AdamW, SGD and gradient clipping ------------===//
//
// Mirrors lib/Interp/OptimizerKernels.cpp: each element is computed in
// double from its f32 operands and rounded once per result. Every element
// is read before any result is written, so a result may share memory with
// the operand it replaces (param' with param, m' with m, ...).
//
//===----------------------------------------------------------------------===//

#include "core/ElementMath.h"
#include "cpu/Kernels.h"

#include <algorithm>
#include <cmath>

using namespace parcrt;

void cpu::adamwUpdate(const TensorRef *t, double lr, double beta1, double beta2,
                      double epsilon, double weightDecay) {
  requireF32("adamw_update", t, 8);
  const auto *param = static_cast<const float *>(t[0].data);
  const auto *grad = static_cast<const float *>(t[1].data);
  const auto *first = static_cast<const float *>(t[2].data);
  const auto *second = static_cast<const float *>(t[3].data);
  // The step count t (1 for the first update).
  double step = *static_cast<const float *>(t[4].data);
  auto *newParam = static_cast<float *>(t[5].data);
  auto *newFirst = static_cast<float *>(t[6].data);
  auto *newSecond = static_cast<float *>(t[7].data);
  double correction1 = 1 - std::pow(beta1, step);
  double correction2 = 1 - std::pow(beta2, step);
  int64_t count = t[0].numElements();
  for (int64_t i = 0; i < count; ++i) {
    math::AdamWElement<double> next = math::adamwElement<double>(
        param[i], grad[i], first[i], second[i], lr, beta1, beta2, 1 - beta1,
        1 - beta2, epsilon, weightDecay, correction1, correction2);
    newParam[i] = static_cast<float>(next.param);
    newFirst[i] = static_cast<float>(next.firstMoment);
    newSecond[i] = static_cast<float>(next.secondMoment);
  }
}

void cpu::sgdUpdate(const TensorRef *t, double lr, double momentum) {
  requireF32("sgd_update", t, 5);
  const auto *param = static_cast<const float *>(t[0].data);
  const auto *grad = static_cast<const float *>(t[1].data);
  const auto *buffer = static_cast<const float *>(t[2].data);
  auto *newParam = static_cast<float *>(t[3].data);
  auto *newBuffer = static_cast<float *>(t[4].data);
  int64_t count = t[0].numElements();
  for (int64_t i = 0; i < count; ++i) {
    math::SgdElement<double> next =
        math::sgdElement<double>(param[i], grad[i], buffer[i], lr, momentum);
    newParam[i] = static_cast<float>(next.param);
    newBuffer[i] = static_cast<float>(next.buffer);
  }
}

void cpu::clipCoefficient(const TensorRef *t, double maxNorm) {
  requireF32("clip_coefficient", t, 2);
  double norm = std::sqrt(double(*static_cast<const float *>(t[0].data)));
  *static_cast<float *>(t[1].data) =
      static_cast<float>(std::min(1.0, maxNorm / (norm + 1e-6)));
}
