//===- ElementMathTest.cpp - the formulas cpu and cuda share --------------===//
//
// The cuda kernels instantiate core/ElementMath.h in float; here those
// instantiations run on the host against the double ones the cpu backend
// uses, so the cuda arithmetic is checked without a GPU.
//
//===----------------------------------------------------------------------===//

#include "core/ElementMath.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace parcrt::math;

TEST(ElementMathTest, CausalVisibilityIsOneRuleBothWays) {
  // Query i sees key j iff j < visibleKeys(i) iff i >= firstQuerySeeing(j),
  // with as many, fewer and more keys than queries.
  for (int64_t queries : {1, 3, 5})
    for (int64_t keys : {1, 3, 7})
      for (int64_t i = 0; i < queries; ++i)
        for (int64_t j = 0; j < keys; ++j) {
          bool sees = j < visibleKeys(true, i, queries, keys);
          EXPECT_EQ(sees, i >= firstQuerySeeing(true, j, queries, keys))
              << queries << " queries, " << keys << " keys, i " << i << " j "
              << j;
          EXPECT_EQ(sees, j <= i + keys - queries);
          EXPECT_EQ(visibleKeys(false, i, queries, keys), keys);
          EXPECT_EQ(firstQuerySeeing(false, j, queries, keys), 0);
        }
}

TEST(ElementMathTest, AdamWInFloatFollowsDouble) {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, decay = 0.01;
  for (double step : {1.0, 10.0, 1000.0})
    for (double grad : {-3.0, -1e-4, 0.0, 0.5, 20.0}) {
      // AdamW as written (Loshchilov and Hutter), in double.
      double c1 = 1 - std::pow(beta1, step), c2 = 1 - std::pow(beta2, step);
      double m = beta1 * 0.01 + (1 - beta1) * grad;
      double v = beta2 * 0.002 + (1 - beta2) * grad * grad;
      double param =
          0.25 - lr * (m / c1 / (std::sqrt(v / c2) + epsilon) + decay * 0.25);
      AdamWElement<float> single = adamwElement<float>(
          0.25f, float(grad), 0.01f, 0.002f,
          adamwStep<float>(lr, beta1, beta2, epsilon, decay, step));
      EXPECT_NEAR(single.param, param, 1e-7);
      EXPECT_NEAR(single.firstMoment, m, 1e-6 * std::abs(m) + 1e-9);
      EXPECT_NEAR(single.secondMoment, v, 1e-5 * std::abs(v) + 1e-12);
    }
  // The first step moves a parameter by about lr against its gradient.
  AdamWElement<double> first = adamwElement<double>(
      1.0, 2.0, 0.0, 0.0, adamwStep<double>(lr, beta1, beta2, epsilon, 0, 1));
  EXPECT_NEAR(first.param, 1.0 - lr, 1e-9);
}

TEST(ElementMathTest, SgdWithMomentum) {
  SgdElement<double> exact = sgdElement<double>(1.0, 0.5, 0.2, 0.1, 0.9);
  EXPECT_DOUBLE_EQ(exact.buffer, 0.9 * 0.2 + 0.5);
  EXPECT_DOUBLE_EQ(exact.param, 1.0 - 0.1 * (0.9 * 0.2 + 0.5));
  SgdElement<float> single = sgdElement<float>(1.0f, 0.5f, 0.2f, 0.1f, 0.9f);
  EXPECT_NEAR(single.param, exact.param, 1e-7);
}

TEST(ElementMathTest, ActivationDerivativesMatchFiniteDifferences) {
  using Activation = parcrt::Backend::Activation;
  auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
  auto forward = [&](Activation kind, double x) {
    switch (kind) {
    case Activation::Relu:
      return x > 0 ? x : 0.0;
    case Activation::Sigmoid:
      return sigmoid(x);
    case Activation::Silu:
      return x * sigmoid(x);
    case Activation::Tanh:
      return std::tanh(x);
    case Activation::GeluErf:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::GeluTanh:
      return 0.5 * x *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    }
    return 0.0;
  };
  for (Activation kind :
       {Activation::Relu, Activation::Sigmoid, Activation::Silu,
        Activation::Tanh, Activation::GeluErf, Activation::GeluTanh})
    for (double x : {-3.0, -0.7, 0.3, 1.1, 4.0}) {
      double h = 1e-5;
      double numeric = (forward(kind, x + h) - forward(kind, x - h)) / (2 * h);
      double exact = activationDerivative<double>(kind, x);
      EXPECT_NEAR(exact, numeric, 1e-7) << int(kind) << " at " << x;
      // The cuda kernels' float instantiation.
      EXPECT_NEAR(activationDerivative<float>(kind, float(x)), exact, 1e-6)
          << int(kind) << " at " << x;
    }
  // NaN passes relu's gradient through, as PyTorch's threshold_backward.
  EXPECT_EQ(activationDerivative<double>(Activation::Relu, std::nan("")), 1.0);
}
