//===- InitTest.cpp - Counter-based initialization tests ------------------===//

#include "parcrt/Init.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

using namespace parcrt;

namespace {

const InitSpec kNormal{InitDistribution::Normal, 0.0, 0.02};

std::vector<double> values(const InitSpec &spec, uint64_t seed,
                           std::string_view name, bool integer, uint64_t begin,
                           size_t count) {
  std::vector<double> out(count);
  initValues(spec, seed, name, integer, begin, count, out.data());
  return out;
}

TEST(InitTest, ReferenceValuesFromDocs) {
  // docs/initialization.md lists these; its Python snippet reproduces them.
  EXPECT_EQ(tensorKey(0, "wte.weight"), 0x9A707ED3B273063Aull);
  std::vector<double> first = values(kNormal, 0, "wte.weight", false, 0, 3);
  EXPECT_DOUBLE_EQ(first[0], 0.013771596039134087);
  EXPECT_DOUBLE_EQ(first[1], -0.00397951171432623);
  EXPECT_DOUBLE_EQ(first[2], 0.013511417416904755);
  std::vector<double> ids =
      values({InitDistribution::Uniform, 0, 50257}, 7, "idx", true, 0, 5);
  EXPECT_EQ(ids, (std::vector<double>{14510, 34517, 18475, 45097, 15675}));
}

TEST(InitTest, Deterministic) {
  EXPECT_EQ(values(kNormal, 3, "a", false, 0, 64),
            values(kNormal, 3, "a", false, 0, 64));
  uint64_t key = tensorKey(3, "a");
  EXPECT_EQ(counterBits(key, 12), counterBits(key, 12));
  EXPECT_NE(counterBits(key, 12), counterBits(key, 13));
}

TEST(InitTest, SliceEqualsWhole) {
  for (InitSpec spec : {kNormal, InitSpec{InitDistribution::Uniform, -1, 1},
                        InitSpec{InitDistribution::Uniform, 0, 7}}) {
    for (bool integer : {false, true}) {
      std::vector<double> whole = values(spec, 1, "w", integer, 0, 10);
      std::vector<double> slice = values(spec, 1, "w", integer, 5, 5);
      EXPECT_EQ(slice, std::vector<double>(whole.begin() + 5, whole.end()));
      EXPECT_EQ(whole[7], initValue(spec, tensorKey(1, "w"), 7, integer));
    }
  }
}

TEST(InitTest, NormalMoments) {
  const size_t count = 100000;
  std::vector<double> v =
      values(kNormal, 0, "h.0.mlp.c_fc.weight", false, 0, count);
  double sum = 0, sumSquares = 0;
  for (double x : v) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sumSquares += x * x;
  }
  double mean = sum / count;
  double deviation = std::sqrt(sumSquares / count - mean * mean);
  // About 4 standard errors: 0.02 / sqrt(1e5) = 6.3e-5 for the mean and
  // 0.02 / sqrt(2e5) = 4.5e-5 for the standard deviation.
  EXPECT_NEAR(mean, 0.0, 2.5e-4);
  EXPECT_NEAR(deviation, 0.02, 2e-4);

  std::vector<double> shifted = values({InitDistribution::Normal, 5.0, 0.02}, 0,
                                       "h.0.mlp.c_fc.weight", false, 0, 4);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_DOUBLE_EQ(shifted[i], 5.0 + v[i]);
}

TEST(InitTest, IntegerUniformCoversRange) {
  std::vector<double> ids =
      values({InitDistribution::Uniform, 0, 10}, 0, "labels", true, 0, 10000);
  std::set<double> seen;
  for (double id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 10);
    EXPECT_EQ(id, std::floor(id));
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 10u);
}

TEST(InitTest, FloatUniformInRange) {
  for (double x : values({InitDistribution::Uniform, -0.5, 1.5}, 2, "u", false,
                         0, 10000)) {
    EXPECT_GE(x, -0.5);
    EXPECT_LT(x, 1.5);
  }
}

TEST(InitTest, Constant) {
  EXPECT_EQ(values({InitDistribution::Constant, 1.0, 0}, 9, "ln_f.weight",
                   false, 100, 3),
            (std::vector<double>{1.0, 1.0, 1.0}));
  EXPECT_EQ(initValue({InitDistribution::Constant, 2.5, 0}, 0, 0, true), 2.0);
}

TEST(InitTest, StreamsDifferByNameAndSeed) {
  std::vector<double> base = values(kNormal, 0, "a", false, 0, 16);
  EXPECT_NE(base, values(kNormal, 0, "b", false, 0, 16));
  EXPECT_NE(base, values(kNormal, 1, "a", false, 0, 16));
  EXPECT_NE(tensorKey(0, "ab"), tensorKey(0, "ba"));
  EXPECT_NE(tensorKey(0, ""), tensorKey(1, ""));
}

TEST(InitTest, HugeIndicesStayFinite) {
  uint64_t key = tensorKey(0, "x");
  for (uint64_t index : {uint64_t(1) << 62, ~uint64_t(0) >> 1, ~uint64_t(0)})
    EXPECT_TRUE(std::isfinite(initValue(kNormal, key, index, false)));
}

} // namespace
