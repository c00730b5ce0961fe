//===- CpuBackendTest.cpp - cpu kernels against hand-computed values ------===//
//
// The cases of test/unittests/Interp/EvaluatorTest.cpp, run through the
// cpu backend (and, for a few, through the C entry points of parcrt.h).
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "parcrt/Backend.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

using namespace parcrt;

namespace {

/// A host tensor the tests fill and read; ref() views it as a TensorRef.
struct HostTensor {
  HostTensor(std::vector<int64_t> shape, std::vector<double> values = {},
             parcrt_dtype dtype = PARCRT_F32)
      : shape(std::move(shape)), dtype(dtype) {
    int64_t count = 1;
    for (int64_t size : this->shape)
      count *= size;
    bytes.assign(count * dtypeBytes(dtype), 0);
    for (size_t i = 0; i < values.size(); ++i)
      set(i, values[i]);
  }

  void set(int64_t i, double value) {
    if (dtype == PARCRT_F32)
      reinterpret_cast<float *>(bytes.data())[i] = static_cast<float>(value);
    else if (dtype == PARCRT_I32)
      reinterpret_cast<int32_t *>(bytes.data())[i] =
          static_cast<int32_t>(value);
    else
      reinterpret_cast<int64_t *>(bytes.data())[i] =
          static_cast<int64_t>(value);
  }

  std::vector<double> values() const {
    std::vector<double> out;
    for (size_t i = 0; i < bytes.size() / dtypeBytes(dtype); ++i)
      out.push_back(dtype == PARCRT_F32
                        ? reinterpret_cast<const float *>(bytes.data())[i]
                    : dtype == PARCRT_I32
                        ? reinterpret_cast<const int32_t *>(bytes.data())[i]
                        : reinterpret_cast<const int64_t *>(bytes.data())[i]);
    return out;
  }

  TensorRef ref() {
    TensorRef t;
    t.data = bytes.data();
    t.dtype = dtype;
    t.rank = static_cast<int>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      t.shape[d] = shape[d];
    return t;
  }

  std::vector<int64_t> shape;
  parcrt_dtype dtype;
  std::vector<uint8_t> bytes;
};

std::vector<TensorRef> refs(std::vector<HostTensor *> tensors) {
  std::vector<TensorRef> out;
  for (HostTensor *t : tensors)
    out.push_back(t->ref());
  return out;
}

void expectNear(const std::vector<double> &actual,
                const std::vector<double> &expected, double tolerance = 1e-6) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

class CpuBackendTest : public ::testing::Test {
protected:
  CpuBackendTest() : backend(createCpuBackend(mesh)) {}

  /// Runs a unary activation on [-1, 0, 1].
  std::vector<double> activation(Backend::Unary op) {
    HostTensor x({3}, {-1, 0, 1}), out({3});
    backend->unary(op, refs({&x, &out}).data());
    return out.values();
  }

  MeshInfo mesh{{}, {}, 0};
  std::unique_ptr<Backend> backend;
};

TEST_F(CpuBackendTest, AddBroadcastsTheRowVector) {
  HostTensor a({2, 3}, {1, 2, 3, 4, 5, 6}), b({3}, {10, 20, 30}), out({2, 3});
  backend->binary('+', refs({&a, &b, &out}).data());
  expectNear(out.values(), {11, 22, 33, 14, 25, 36});
}

TEST_F(CpuBackendTest, SubBroadcastsBothOperands) {
  HostTensor a({2, 1}, {10, 20}), b({1, 3}, {1, 2, 3}), out({2, 3});
  backend->binary('-', refs({&a, &b, &out}).data());
  expectNear(out.values(), {9, 8, 7, 19, 18, 17});
}

TEST_F(CpuBackendTest, MulAndDivElementwise) {
  HostTensor a({3}, {1, -2, 3}), b({3}, {4, 5, -0.5}), product({3}),
      quotient({3});
  backend->binary('*', refs({&a, &b, &product}).data());
  backend->binary('/', refs({&product, &b, &quotient}).data());
  expectNear(product.values(), {4, -10, -1.5});
  expectNear(quotient.values(), {1, -2, 3});
}

TEST_F(CpuBackendTest, BroadcastsOverMergedDimensions) {
  // [2, 3, 4, 5] against a batch norm's [1, 3, 1, 1], a trailing [4, 5], a
  // [2, 1, 4, 1] by a [3, 1, 5] (both broadcast, nothing merges across),
  // and unit dimensions among them.
  struct Case {
    std::vector<int64_t> lhs, rhs, result;
  };
  for (const Case &c : {Case{{2, 3, 4, 5}, {1, 3, 1, 1}, {2, 3, 4, 5}},
                        Case{{2, 3, 4, 5}, {4, 5}, {2, 3, 4, 5}},
                        Case{{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}},
                        Case{{1, 3, 1, 1}, {2, 1, 1, 4, 5}, {2, 1, 3, 4, 5}}}) {
    auto count = [](const std::vector<int64_t> &shape) {
      int64_t n = 1;
      for (int64_t size : shape)
        n *= size;
      return n;
    };
    std::vector<double> lv(count(c.lhs)), rv(count(c.rhs));
    for (size_t i = 0; i < lv.size(); ++i)
      lv[i] = 1 + i;
    for (size_t i = 0; i < rv.size(); ++i)
      rv[i] = 1000 * (1 + i);
    // Element i of the result by its index, each operand's aligned right.
    std::vector<double> expected(count(c.result));
    for (size_t i = 0; i < expected.size(); ++i) {
      auto at = [&](const std::vector<int64_t> &shape) {
        int64_t rest = i, offset = 0, stride = 1;
        for (int dim = static_cast<int>(c.result.size()) - 1,
                 own = static_cast<int>(shape.size()) - 1;
             dim >= 0; --dim, --own) {
          int64_t index = rest % c.result[dim];
          rest /= c.result[dim];
          if (own < 0)
            continue;
          offset += (shape[own] == 1 ? 0 : index) * stride;
          stride *= shape[own];
        }
        return offset;
      };
      expected[i] = lv[at(c.lhs)] + rv[at(c.rhs)];
    }
    HostTensor a(c.lhs, lv), b(c.rhs, rv), out(c.result);
    backend->binary('+', refs({&a, &b, &out}).data());
    expectNear(out.values(), expected);
  }
}

TEST_F(CpuBackendTest, MatmulWithTransposedBroadcastWeight) {
  // lhs [2, 1, 2] (batch 2), rhs [3, 2] used transposed as [2, 3].
  HostTensor a({2, 1, 2}, {1, 2, 3, 4}), w({3, 2}, {1, 0, 0, 1, 1, 1}),
      out({2, 1, 3});
  backend->matmul(refs({&a, &w, &out}).data(), false, true, false);
  expectNear(out.values(), {1, 2, 3, 3, 4, 7});
}

TEST_F(CpuBackendTest, MatmulWithTransposedLhs) {
  HostTensor a({2, 2}, {1, 2, 3, 4}), b({2, 1}, {1, 1}), out({2, 1});
  backend->matmul(refs({&a, &b, &out}).data(), true, false, false);
  expectNear(out.values(), {4, 6});
}

TEST_F(CpuBackendTest, MatmulBroadcastsTheLhsOverRhsBatches) {
  // lhs [2, 2] shared by both rhs batches [2, 2, 1].
  HostTensor a({2, 2}, {1, 2, 3, 4}), b({2, 2, 1}, {1, 0, 0, 1}),
      out({2, 2, 1});
  backend->matmul(refs({&a, &b, &out}).data(), false, false, false);
  expectNear(out.values(), {1, 3, 2, 4});
}

TEST_F(CpuBackendTest, MatmulBatchesBothOperands) {
  // [2, 1, 2] x [2, 2, 1] with rhs transposed from [2, 1, 2].
  HostTensor a({2, 1, 2}, {1, 2, 3, 4}), b({2, 1, 2}, {1, 1, 2, 0}),
      out({2, 1, 1});
  backend->matmul(refs({&a, &b, &out}).data(), false, true, false);
  expectNear(out.values(), {3, 6});
}

// Summed over the batch: a^T b over both batches as one GEMM (the weight
// gradient's form), and a b per batch without transposes; both against the
// sum of the per-batch products written out.
TEST_F(CpuBackendTest, MatmulContractingBatch) {
  // a [2, 2, 2], b [2, 2, 1].
  HostTensor a({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
      b({2, 2, 1}, {1, -1, 2, 3}), transposed({2, 1}), plain({2, 1});
  backend->matmul(refs({&a, &b, &transposed}).data(), true, false, true);
  // a0^T b0 = [1*1 + 3*-1, 2*1 + 4*-1] = [-2, -2];
  // a1^T b1 = [5*2 + 7*3, 6*2 + 8*3] = [31, 36].
  expectNear(transposed.values(), {29, 34});
  backend->matmul(refs({&a, &b, &plain}).data(), false, false, true);
  // a0 b0 = [1 - 2, 3 - 4] = [-1, -1]; a1 b1 = [10 + 18, 14 + 24] = [28, 38].
  expectNear(plain.values(), {27, 37});
}

TEST_F(CpuBackendTest, Activations) {
  using Unary = Backend::Unary;
  double s1 = 1 / (1 + std::exp(-1.0)), sm1 = 1 / (1 + std::exp(1.0));
  expectNear(activation(Unary::Relu), {0, 0, 1});
  expectNear(activation(Unary::Neg), {1, 0, -1});
  expectNear(activation(Unary::Exp), {std::exp(-1.0), 1, std::exp(1.0)});
  expectNear(activation(Unary::Tanh), {std::tanh(-1.0), 0, std::tanh(1.0)});
  expectNear(activation(Unary::Sigmoid), {sm1, 0.5, s1});
  expectNear(activation(Unary::Silu), {-sm1, 0, s1});
  expectNear(activation(Unary::GeluErf),
             {-0.15865525393145707, 0, 0.8413447460685429});
  expectNear(activation(Unary::GeluTanh),
             {-0.15880800939172324, 0, 0.8411919906082768});
  HostTensor x({2}, {1, std::exp(2.0)}), out({2});
  backend->unary(Unary::Log, refs({&x, &out}).data());
  expectNear(out.values(), {0, 2});
}

TEST_F(CpuBackendTest, SoftmaxIsStableForLargeLogits) {
  HostTensor x({2, 3}, {1000, 1001, 1002, -1000, -1000, -1000}), out({2, 3});
  backend->softmax(refs({&x, &out}).data(), 1);
  double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  expectNear(out.values(), {std::exp(-2.0) / z, std::exp(-1.0) / z, 1 / z,
                            1.0 / 3, 1.0 / 3, 1.0 / 3});
}

TEST_F(CpuBackendTest, SoftmaxAlongTheFirstAxis) {
  HostTensor x({2, 2}, {0, 5, 0, 5}), out({2, 2});
  backend->softmax(refs({&x, &out}).data(), 0);
  expectNear(out.values(), {0.5, 0.5, 0.5, 0.5});
}

TEST_F(CpuBackendTest, LayerNormNormalizesTheLastAxis) {
  HostTensor x({1, 4}, {1, 2, 3, 4}), g({4}, {1, 1, 2, 1}),
      b({4}, {0, 0, 0, 10}), out({1, 4});
  backend->layerNorm(refs({&x, &g, &b, &out}).data(), 0.0);
  // mean 2.5, biased variance 1.25.
  double r = 1 / std::sqrt(1.25);
  expectNear(out.values(), {-1.5 * r, -0.5 * r, 2 * 0.5 * r, 1.5 * r + 10});
}

TEST_F(CpuBackendTest, RmsNorm) {
  HostTensor x({2}, {3, 4}), g({2}, {1, 2}), out({2});
  backend->rmsNorm(refs({&x, &g, &out}).data(), 0.0);
  double rms = std::sqrt(12.5);
  expectNear(out.values(), {3 / rms, 8 / rms});
}

TEST_F(CpuBackendTest, CausalAttentionMasksFutureKeys) {
  HostTensor q({1, 1, 2, 1}, {1, 2}), k({1, 1, 2, 1}, {1, 3}),
      v({1, 1, 2, 1}, {10, 20}), out({1, 1, 2, 1});
  backend->attention(refs({&q, &k, &v, &out}).data(), true, false, 0.5);
  double w0 = std::exp(1.0), w1 = std::exp(3.0);
  expectNear(out.values(), {10, (10 * w0 + 20 * w1) / (w0 + w1)}, 1e-5);
}

TEST_F(CpuBackendTest, CausalAttentionAlignsQueriesWithTheLastKeys) {
  // One query, two keys: the query is the last position and sees both.
  HostTensor q({1, 1, 1, 1}, {0}), k({1, 1, 2, 1}, {0, 0}),
      v({1, 1, 2, 1}, {2, 4}), out({1, 1, 1, 1});
  backend->attention(refs({&q, &k, &v, &out}).data(), true, false, 1.0);
  expectNear(out.values(), {3});
}

TEST_F(CpuBackendTest, NonCausalAttentionSeesAllKeys) {
  HostTensor q({1, 1, 1, 1}, {1}), k({1, 1, 2, 1}, {0, 0}),
      v({1, 1, 2, 2}, {1, 2, 3, 4}), out({1, 1, 1, 2});
  backend->attention(refs({&q, &k, &v, &out}).data(), false, false, 1.0);
  expectNear(out.values(), {2, 3});
}

TEST_F(CpuBackendTest, CrossEntropyIsTheMeanNegativeLogLikelihood) {
  for (parcrt_dtype labelType : {PARCRT_I32, PARCRT_I64}) {
    HostTensor x({2, 2}, {0, 0, std::log(3.0), 0}), y({2}, {0, 1}, labelType),
        out({});
    backend->crossEntropy(refs({&x, &y, &out}).data());
    expectNear(out.values(), {(std::log(2.0) + std::log(4.0)) / 2});
  }
}

TEST_F(CpuBackendTest, CrossEntropyOverNoRowsIsNaN) {
  HostTensor x({0, 3}, {}), y({0}, {}, PARCRT_I64), out({}, {0});
  backend->crossEntropy(refs({&x, &y, &out}).data());
  EXPECT_TRUE(std::isnan(out.values()[0]));
}

TEST_F(CpuBackendTest, CrossEntropyRejectsAnOutOfRangeLabel) {
  HostTensor x({1, 2}, {0, 0}), y({1}, {2}, PARCRT_I64), out({});
  EXPECT_EXIT(backend->crossEntropy(refs({&x, &y, &out}).data()),
              ::testing::ExitedWithCode(1), "labels element 0 is 2");
}

TEST_F(CpuBackendTest, EmbeddingLooksUpRows) {
  HostTensor table({3, 2}, {0, 1, 10, 11, 20, 21}),
      ids({2, 2}, {2, 0, 1, 1}, PARCRT_I32), out({2, 2, 2});
  backend->embedding(refs({&table, &ids, &out}).data(), false);
  expectNear(out.values(), {20, 21, 0, 1, 10, 11, 10, 11});
}

TEST_F(CpuBackendTest, ShardedEmbeddingZeroesIdsOutsideItsBlock) {
  // Block 1 of a 4-row vocabulary: rows 2 and 3.
  HostTensor table({2, 2}, {20, 21, 30, 31}), ids({3}, {3, 0, 2}, PARCRT_I64),
      shard({}, {1}, PARCRT_I64), out({3, 2}, {7, 7, 7, 7, 7, 7});
  backend->embedding(refs({&table, &ids, &shard, &out}).data(), true);
  expectNear(out.values(), {30, 31, 0, 0, 20, 21});
}

TEST_F(CpuBackendTest, EmbeddingRejectsAnIdOutsideTheTable) {
  HostTensor table({3, 2}), ids({1}, {-1}, PARCRT_I64), out({1, 2});
  EXPECT_EXIT(backend->embedding(refs({&table, &ids, &out}).data(), false),
              ::testing::ExitedWithCode(1),
              "outside the table's rows \\[0, 3\\)");
}

TEST_F(CpuBackendTest, TakePicksOneClassPerRow) {
  HostTensor x({2, 3}, {1, 2, 3, 4, 5, 6}), idx({2}, {2, 0}, PARCRT_I32),
      out({2});
  backend->take(refs({&x, &idx, &out}).data(), false);
  expectNear(out.values(), {3, 4});
  // Shard 1 of classes of width 3 holds classes [3, 6).
  HostTensor shifted({2}, {4, 1}, PARCRT_I64), shard({}, {1}, PARCRT_I64);
  backend->take(refs({&x, &shifted, &shard, &out}).data(), true);
  expectNear(out.values(), {2, 0});
}

TEST_F(CpuBackendTest, ReshapeTransposeSliceConcat) {
  HostTensor x({6}, {0, 1, 2, 3, 4, 5}), reshaped({2, 3}), transposed({3, 2}),
      sliced({2, 2}), joined({2, 4});
  backend->copy(refs({&x, &reshaped}).data());
  int64_t perm[] = {1, 0};
  backend->transpose(refs({&reshaped, &transposed}).data(), perm);
  int64_t offsets[] = {1, 0}, strides[] = {1, 1};
  backend->slice(refs({&transposed, &sliced}).data(), offsets, strides);
  std::vector<TensorRef> inputs = refs({&sliced, &sliced});
  backend->concat(inputs.data(), 2, joined.ref(), 1);
  expectNear(transposed.values(), {0, 3, 1, 4, 2, 5});
  expectNear(joined.values(), {1, 4, 1, 4, 2, 5, 2, 5});
}

TEST_F(CpuBackendTest, LayoutOpsMoveAnyDtype) {
  HostTensor x({2, 3}, {1, 2, 3, 4, 5, 6}, PARCRT_I64),
      t({3, 2}, {}, PARCRT_I64), joined({4, 3}, {}, PARCRT_I64);
  int64_t perm[] = {1, 0};
  backend->transpose(refs({&x, &t}).data(), perm);
  expectNear(t.values(), {1, 4, 2, 5, 3, 6});
  std::vector<TensorRef> inputs = refs({&x, &x});
  backend->concat(inputs.data(), 2, joined.ref(), 0);
  expectNear(joined.values(), {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
}

TEST_F(CpuBackendTest, StridedSlice) {
  HostTensor x({7}, {0, 1, 2, 3, 4, 5, 6}), out({3});
  int64_t offsets[] = {1}, strides[] = {2};
  backend->slice(refs({&x, &out}).data(), offsets, strides);
  expectNear(out.values(), {1, 3, 5});
}

TEST_F(CpuBackendTest, Reductions) {
  HostTensor x({2, 3}, {1, 2, 3, 4, 5, 6}), sum({2}), mean({1, 3}), all({}),
      max({2});
  int64_t last[] = {1}, first[] = {0}, both[] = {0, 1};
  backend->reduce(Backend::Reduce::Sum, refs({&x, &sum}).data(), last, 1);
  backend->reduce(Backend::Reduce::Mean, refs({&x, &mean}).data(), first, 1);
  backend->reduce(Backend::Reduce::Sum, refs({&x, &all}).data(), both, 2);
  backend->reduce(Backend::Reduce::Max, refs({&x, &max}).data(), last, 1);
  expectNear(sum.values(), {6, 15});
  expectNear(mean.values(), {2.5, 3.5, 4.5});
  expectNear(all.values(), {21});
  expectNear(max.values(), {3, 6});
}

TEST_F(CpuBackendTest, ReductionsOverEmptyDimensionsGiveZeros) {
  // [2, 0] over its empty dim, [0, 3] over its empty first dim, and the
  // empty [2, 0, 2] over dims 0 and 2.
  HostTensor rows({2, 0}), rowSums({2}, {7, 7}), columns({0, 3}),
      columnSums({3}, {7, 7, 7}), empty({2, 0, 2}), none({0});
  int64_t last[] = {1}, first[] = {0}, apart[] = {0, 2};
  backend->reduce(Backend::Reduce::Sum, refs({&rows, &rowSums}).data(), last,
                  1);
  backend->reduce(Backend::Reduce::Sum, refs({&columns, &columnSums}).data(),
                  first, 1);
  backend->reduce(Backend::Reduce::Sum, refs({&empty, &none}).data(), apart, 2);
  expectNear(rowSums.values(), {0, 0});
  expectNear(columnSums.values(), {0, 0, 0});
}

TEST_F(CpuBackendTest, ReductionsOverDimensionsThatAreNotAdjacent) {
  // [2, 3, 2] over dims 0 and 2 (a bias gradient's layout): totals per
  // dim 1, reduced dims on both sides of it.
  std::vector<double> xs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  HostTensor x({2, 3, 2}, xs), sum({1, 3, 1}), max({3});
  int64_t outer[] = {0, 2};
  backend->reduce(Backend::Reduce::Sum, refs({&x, &sum}).data(), outer, 2);
  backend->reduce(Backend::Reduce::Max, refs({&x, &max}).data(), outer, 2);
  expectNear(sum.values(), {1 + 2 + 7 + 8, 3 + 4 + 9 + 10, 5 + 6 + 11 + 12});
  expectNear(max.values(), {8, 10, 12});
  // [2, 2, 3] over dims 0 and 1, kept last: one step along each row.
  HostTensor y({2, 2, 3}, xs), columns({3});
  int64_t leading[] = {1, 0};
  backend->reduce(Backend::Reduce::Sum, refs({&y, &columns}).data(), leading,
                  2);
  expectNear(columns.values(),
             {1 + 4 + 7 + 10, 2 + 5 + 8 + 11, 3 + 6 + 9 + 12});
  // [2, 2, 2, 2] over dims 0 and 2, the last kept: each row adds into the
  // totals with a step of 1.
  std::vector<double> zs(16);
  for (int i = 0; i < 16; ++i)
    zs[i] = i;
  HostTensor z({2, 2, 2, 2}, zs), kept({2, 2});
  int64_t apart[] = {0, 2};
  backend->reduce(Backend::Reduce::Sum, refs({&z, &kept}).data(), apart, 2);
  // Element (a, b, c, d) is 8a + 4b + 2c + d.
  expectNear(kept.values(), {0 + 2 + 8 + 10, 1 + 3 + 9 + 11, 4 + 6 + 12 + 14,
                             5 + 7 + 13 + 15});
}

TEST_F(CpuBackendTest, ReductionsOfTrailingRowsIntoInterleavedTotals) {
  // A batch norm's statistics in groups: [groups, batch, channels, h, w]
  // over batch, h and w, keeping groups and channels; rows long enough to
  // run on several threads, with a few values far from the rest.
  std::vector<int64_t> shape = {2, 3, 5, 40, 41};
  int64_t rowLength = 40 * 41, count = 2 * 3 * 5 * rowLength;
  std::vector<double> xs(count);
  for (int64_t i = 0; i < count; ++i)
    xs[i] = std::sin(0.37 * i) + (i % 997 == 0 ? 1e3 : 0);
  std::vector<double> sums(2 * 5, 0.0), maxima(2 * 5, -INFINITY);
  for (int64_t i = 0; i < count; ++i) {
    int64_t row = i / rowLength, channel = row % 5, group = row / 15;
    sums[group * 5 + channel] += xs[i];
    maxima[group * 5 + channel] = std::max(maxima[group * 5 + channel], xs[i]);
  }
  std::vector<double> means = sums;
  for (double &mean : means)
    mean /= 3 * rowLength;
  HostTensor x(shape, xs), sum({2, 1, 5, 1, 1}), mean({2, 5}), max({2, 5});
  int64_t axes[] = {1, 3, 4};
  backend->reduce(Backend::Reduce::Sum, refs({&x, &sum}).data(), axes, 3);
  backend->reduce(Backend::Reduce::Mean, refs({&x, &mean}).data(), axes, 3);
  backend->reduce(Backend::Reduce::Max, refs({&x, &max}).data(), axes, 3);
  expectNear(sum.values(), sums, 1e-3);
  expectNear(mean.values(), means, 1e-6);
  expectNear(max.values(), maxima, 1e-4);
}

// Along the contiguous last axis and along a strided first one; shifted by
// the maximum, so 1000 does not overflow; a line of -inf gives -inf.
TEST_F(CpuBackendTest, LogSumExp) {
  HostTensor x({2, 3}, {0, 0, 0, 1000, 1000, -INFINITY}), rows({2}),
      columns({1, 3});
  int64_t last[] = {1}, first[] = {0};
  backend->reduce(Backend::Reduce::LogSumExp, refs({&x, &rows}).data(), last,
                  1);
  backend->reduce(Backend::Reduce::LogSumExp, refs({&x, &columns}).data(),
                  first, 1);
  // f32 results: within one rounding of the exact values.
  EXPECT_FLOAT_EQ(rows.values()[0], std::log(3.0));
  EXPECT_FLOAT_EQ(rows.values()[1], 1000 + std::log(2.0));
  expectNear(columns.values(), {1000, 1000, 0});
  HostTensor infinite({1, 2}, {-INFINITY, -INFINITY}), infiniteOut({1});
  backend->reduce(Backend::Reduce::LogSumExp,
                  refs({&infinite, &infiniteOut}).data(), last, 1);
  EXPECT_EQ(infiniteOut.values()[0], -INFINITY);
}

TEST_F(CpuBackendTest, Constants) {
  HostTensor values({3}), splat({2}, {}, PARCRT_I64);
  double given[] = {1.5, -2.0, 4.0}, two[] = {2.0};
  backend->constant(values.ref(), given, 3);
  backend->constant(splat.ref(), two, 1);
  expectNear(values.values(), {1.5, -2, 4});
  expectNear(splat.values(), {2, 2});
}

TEST_F(CpuBackendTest, FloatOpsRejectOtherDtypes) {
  HostTensor a({2}, {1, 2}, PARCRT_I32), out({2}, {}, PARCRT_I32);
  EXPECT_EXIT(backend->unary(Backend::Unary::Exp, refs({&a, &out}).data()),
              ::testing::ExitedWithCode(1), "computes in f32 only.*i32");
}

TEST_F(CpuBackendTest, AllSliceAndAxisIndexOnASingleRank) {
  HostTensor x({2}, {1, 2}), out({2}), index({}, {}, PARCRT_I64);
  backend->allSlice({}, 0, refs({&x, &out}).data());
  backend->axisIndex({}, index.ref());
  expectNear(out.values(), {1, 2});
  expectNear(index.values(), {0});
}

//===----------------------------------------------------------------------===//
// Gradients and optimizers
//===----------------------------------------------------------------------===//

/// Central finite difference of `f` at `x` (f is computed in double).
template <typename Fn> double numericDerivative(Fn f, double x) {
  double h = 1e-5;
  return (f(x + h) - f(x - h)) / (2 * h);
}

TEST_F(CpuBackendTest, BroadcastToRepeatsAlongNewAndUnitDims) {
  HostTensor row({3}, {1, 2, 3}), column({2, 1}, {10, 20}), a({2, 3}),
      b({2, 2, 3});
  backend->broadcastTo(refs({&row, &a}).data());
  backend->broadcastTo(refs({&column, &b}).data());
  expectNear(a.values(), {1, 2, 3, 1, 2, 3});
  expectNear(b.values(), {10, 10, 10, 20, 20, 20, 10, 10, 10, 20, 20, 20});
  // Data movement: any dtype.
  HostTensor ids({1}, {7}, PARCRT_I64), many({3}, {}, PARCRT_I64);
  backend->broadcastTo(refs({&ids, &many}).data());
  expectNear(many.values(), {7, 7, 7});
}

TEST_F(CpuBackendTest, SliceGradPlacesTheGradientIntoZeros) {
  HostTensor g({3}, {1, 2, 3}), out({7}, {9, 9, 9, 9, 9, 9, 9});
  int64_t offsets[] = {1}, strides[] = {2};
  backend->sliceGrad(refs({&g, &out}).data(), offsets, strides);
  expectNear(out.values(), {0, 1, 0, 2, 0, 3, 0});
  // The inverse of StridedSlice's placement in two dimensions.
  HostTensor g2({2, 1}, {5, 6}), out2({3, 2}, {9, 9, 9, 9, 9, 9});
  int64_t offsets2[] = {1, 1}, strides2[] = {1, 1};
  backend->sliceGrad(refs({&g2, &out2}).data(), offsets2, strides2);
  expectNear(out2.values(), {0, 0, 0, 5, 0, 6});
}

TEST_F(CpuBackendTest, ActivationGradIsTheDerivativeTimesTheGradient) {
  using Activation = Backend::Activation;
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  struct Case {
    Activation kind;
    double (*forward)(double);
  } cases[] = {
      {Activation::Relu, [](double v) { return v > 0 ? v : 0.0; }},
      {Activation::Sigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {Activation::Silu, [](double v) { return v / (1 + std::exp(-v)); }},
      {Activation::Tanh, [](double v) { return std::tanh(v); }},
      {Activation::GeluErf,
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {Activation::GeluTanh,
       [](double v) {
         return 0.5 * v *
                (1 +
                 std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       }},
  };
  for (const Case &c : cases) {
    HostTensor x({3}, {0.5, -0.5, 2}), g({3}, {2, 1, -1}), out({3});
    backend->activationGrad(c.kind, refs({&x, &g, &out}).data());
    std::vector<double> expected;
    for (double v : {0.5, -0.5, 2.0})
      expected.push_back(numericDerivative(c.forward, v));
    expected[0] *= 2;
    expected[2] *= -1;
    expectNear(out.values(), expected, 1e-6);
  }
  // Closed forms at x = 0.5 (g = 1).
  double s = sigmoid(0.5), t = std::tanh(0.5);
  double expected[] = {1, s * (1 - s), s + 0.5 * s * (1 - s), 1 - t * t,
                       0.5 * (1 + std::erf(0.5 / std::sqrt(2.0))) +
                           0.5 * std::exp(-0.125) / std::sqrt(2 * M_PI)};
  for (int kind = 0; kind < 5; ++kind) {
    HostTensor x({1}, {0.5}), g({1}, {1}), out({1});
    backend->activationGrad(static_cast<Activation>(kind),
                            refs({&x, &g, &out}).data());
    expectNear(out.values(), {expected[kind]});
  }
}

// As in PyTorch: relu keeps NaN, and its gradient at a NaN passes g.
TEST_F(CpuBackendTest, ReluKeepsNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor x({3}, {nan, -1, 2}), y({3});
  backend->unary(Backend::Unary::Relu, refs({&x, &y}).data());
  std::vector<double> values = y.values();
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_EQ(values[1], 0);
  EXPECT_EQ(values[2], 2);

  HostTensor g({3}, {3, 3, 3}), dx({3});
  backend->activationGrad(Backend::Activation::Relu,
                          refs({&x, &g, &dx}).data());
  expectNear(dx.values(), {3, 0, 3});
}

TEST_F(CpuBackendTest, SoftmaxGradAlongEitherAxis) {
  HostTensor y({1, 3}, {0.2, 0.3, 0.5}), g({1, 3}, {1, 2, 3}), out({1, 3});
  backend->softmaxGrad(refs({&y, &g, &out}).data(), 1);
  // sum(g * y) = 2.3; the result sums to 0.
  expectNear(out.values(), {0.2 * -1.3, 0.3 * -0.3, 0.5 * 0.7});
  HostTensor y0({2, 2}, {0.25, 0.5, 0.75, 0.5}), g0({2, 2}, {1, 4, 3, 2}),
      out0({2, 2});
  backend->softmaxGrad(refs({&y0, &g0, &out0}).data(), 0);
  // Column 0: dot 0.25 + 2.25 = 2.5; column 1: dot 2 + 1 = 3.
  expectNear(out0.values(), {0.25 * -1.5, 0.5 * 1, 0.75 * 0.5, 0.5 * -1});
}

/// layer_norm of `x` (rows of `features`) in double.
std::vector<double> layerNormReference(const std::vector<double> &x,
                                       const std::vector<double> &gamma,
                                       const std::vector<double> &beta,
                                       double epsilon) {
  size_t features = gamma.size();
  std::vector<double> out(x.size());
  for (size_t row = 0; row < x.size() / features; ++row) {
    double mean = 0, variance = 0;
    for (size_t n = 0; n < features; ++n)
      mean += x[row * features + n] / features;
    for (size_t n = 0; n < features; ++n)
      variance += std::pow(x[row * features + n] - mean, 2) / features;
    for (size_t n = 0; n < features; ++n)
      out[row * features + n] = (x[row * features + n] - mean) /
                                    std::sqrt(variance + epsilon) * gamma[n] +
                                beta[n];
  }
  return out;
}

/// The gradient of sum(g * f(x)) with respect to x, by central differences.
template <typename Fn>
std::vector<double> numericGradient(Fn f, std::vector<double> x,
                                    const std::vector<double> &g) {
  std::vector<double> gradient(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double saved = x[i], h = 1e-5;
    auto loss = [&](double value) {
      x[i] = value;
      std::vector<double> y = f(x);
      double total = 0;
      for (size_t n = 0; n < y.size(); ++n)
        total += g[n] * y[n];
      return total;
    };
    gradient[i] = (loss(saved + h) - loss(saved - h)) / (2 * h);
    x[i] = saved;
  }
  return gradient;
}

TEST_F(CpuBackendTest, LayerNormGradMatchesFiniteDifferences) {
  std::vector<double> xs = {1, 2, 4, -1, 0.5, 3}, gammas = {1, 2, 0.5},
                      betas = {0, 0, 0}, gs = {0.5, -1, 2, 1, 1, -0.5};
  HostTensor x({2, 3}, xs), gamma({3}, gammas), g({2, 3}, gs), dx({2, 3}),
      dgamma({3}), dbeta({3});
  double epsilon = 1e-5;
  backend->layerNormGrad(refs({&x, &gamma, &g, &dx, &dgamma, &dbeta}).data(),
                         epsilon);
  expectNear(dx.values(),
             numericGradient(
                 [&](const std::vector<double> &v) {
                   return layerNormReference(v, gammas, betas, epsilon);
                 },
                 xs, gs),
             1e-5);
  // dgamma = sum over rows of g * xhat, dbeta = sum over rows of g.
  std::vector<double> xhat = layerNormReference(xs, {1, 1, 1}, betas, epsilon);
  expectNear(dgamma.values(), {gs[0] * xhat[0] + gs[3] * xhat[3],
                               gs[1] * xhat[1] + gs[4] * xhat[4],
                               gs[2] * xhat[2] + gs[5] * xhat[5]});
  expectNear(dbeta.values(), {1.5, 0, 1.5});
}

TEST_F(CpuBackendTest, RmsNormGradMatchesFiniteDifferences) {
  std::vector<double> xs = {3, 4, 1, -2}, gammas = {1, 2}, gs = {1, -0.5, 2, 1};
  HostTensor x({2, 2}, xs), gamma({2}, gammas), g({2, 2}, gs), dx({2, 2}),
      dgamma({2});
  double epsilon = 1e-6;
  backend->rmsNormGrad(refs({&x, &gamma, &g, &dx, &dgamma}).data(), epsilon);
  auto rmsNorm = [&](const std::vector<double> &v) {
    std::vector<double> out(v.size());
    for (size_t row = 0; row < 2; ++row) {
      double r = 1 / std::sqrt((v[2 * row] * v[2 * row] +
                                v[2 * row + 1] * v[2 * row + 1]) /
                                   2 +
                               epsilon);
      for (size_t n = 0; n < 2; ++n)
        out[2 * row + n] = v[2 * row + n] * r * gammas[n];
    }
    return out;
  };
  expectNear(dx.values(), numericGradient(rmsNorm, xs, gs), 1e-5);
  double r0 = 1 / std::sqrt(12.5 + epsilon), r1 = 1 / std::sqrt(2.5 + epsilon);
  expectNear(dgamma.values(),
             {1 * 3 * r0 + 2 * 1 * r1, -0.5 * 4 * r0 + 1 * -2 * r1});
}

TEST_F(CpuBackendTest, EmbeddingGradScatterAddsRepeatedIds) {
  HostTensor ids({3}, {2, 0, 2}, PARCRT_I32), g({3, 2}, {1, 2, 3, 4, 5, 6}),
      table({3, 2}, {9, 9, 9, 9, 9, 9});
  backend->embeddingGrad(refs({&ids, &g, &table}).data(), false);
  expectNear(table.values(), {3, 4, 0, 0, 6, 8});
}

TEST_F(CpuBackendTest, ShardedEmbeddingGradSkipsIdsOutsideItsBlock) {
  // Block 1 of a 4-row vocabulary: rows 2 and 3.
  HostTensor ids({2, 2}, {3, 0, 2, 3}, PARCRT_I64),
      g({2, 2, 2}, {1, 2, 10, 20, 3, 4, 5, 6}), shard({}, {1}, PARCRT_I64),
      table({2, 2}, {9, 9, 9, 9});
  backend->embeddingGrad(refs({&ids, &g, &shard, &table}).data(), true);
  expectNear(table.values(), {3, 4, 6, 8});
}

TEST_F(CpuBackendTest, EmbeddingGradRejectsAnIdOutsideTheTable) {
  HostTensor ids({1}, {3}, PARCRT_I64), g({1, 2}), table({3, 2});
  EXPECT_EXIT(backend->embeddingGrad(refs({&ids, &g, &table}).data(), false),
              ::testing::ExitedWithCode(1),
              "embedding_grad: ids element 0 is 3, outside the table's rows");
}

TEST_F(CpuBackendTest, CrossEntropyGradIsSoftmaxMinusOneHotOverCount) {
  for (parcrt_dtype labelType : {PARCRT_I32, PARCRT_I64}) {
    HostTensor logits({2, 3}, {0, 0, std::log(2.0), 1, 1, 1}),
        labels({2}, {2, 0}, labelType), g({}, {2}), out({2, 3});
    backend->crossEntropyGrad(refs({&logits, &labels, &g, &out}).data(), 4,
                              false);
    // softmax rows {1/4, 1/4, 1/2} and {1/3, 1/3, 1/3}; scale 2 / 4.
    expectNear(out.values(), {0.125, 0.125, -0.25, -1.0 / 3, 1.0 / 6, 1.0 / 6});
    std::vector<double> values = out.values();
    EXPECT_NEAR(values[0] + values[1] + values[2], 0, 1e-7);
    EXPECT_NEAR(values[3] + values[4] + values[5], 0, 1e-7);
  }
  HostTensor logits({1, 2}), labels({1}, {-1}, PARCRT_I32), g({}, {1}),
      out({1, 2});
  EXPECT_EXIT(backend->crossEntropyGrad(
                  refs({&logits, &labels, &g, &out}).data(), 1, false),
              ::testing::ExitedWithCode(1), "labels element 0 is -1");
}

TEST_F(CpuBackendTest, VocabBlockCrossEntropyGradUsesTheGlobalNormalizer) {
  // Block 1 of 6 classes. Row 0's classes exponentiate to {1, 1, 1 | 2, 3,
  // 1} (sum 9), label 4 is here; row 1's to six ones, label 1 is not.
  HostTensor logits({2, 3}, {std::log(2.0), std::log(3.0), 0, 0, 0, 0}),
      labels({2}, {4, 1}, PARCRT_I64), g({}, {2}),
      normalizer({2}, {std::log(9.0), std::log(6.0)}),
      shard({}, {1}, PARCRT_I64), out({2, 3});
  backend->crossEntropyGrad(
      refs({&logits, &labels, &g, &normalizer, &shard, &out}).data(), 4, true);
  expectNear(out.values(),
             {1.0 / 9, 1.5 / 9 - 0.5, 0.5 / 9, 1.0 / 12, 1.0 / 12, 1.0 / 12});
}

TEST_F(CpuBackendTest, AttentionGradWithOneKeyPassesTheGradientToV) {
  // One key: the weight is 1 whatever the scores, so dv = g, dq = dk = 0.
  HostTensor q({1, 1, 1, 2}, {0.3, -1}), k({1, 1, 1, 2}, {2, 0.5}),
      v({1, 1, 1, 3}, {1, 2, 3}), g({1, 1, 1, 3}, {4, -5, 6}),
      dq({1, 1, 1, 2}, {9, 9}), dk({1, 1, 1, 2}, {9, 9}), dv({1, 1, 1, 3});
  backend->attentionGrad(refs({&q, &k, &v, &g, &dq, &dk, &dv}).data(), true,
                         false, 0.7);
  expectNear(dv.values(), {4, -5, 6});
  expectNear(dq.values(), {0, 0});
  expectNear(dk.values(), {0, 0});
}

/// Attention over [1, 1, S, D] x [1, 1, T, D] x [1, 1, T, E] in double.
std::vector<double> attentionReference(const std::vector<double> &q,
                                       const std::vector<double> &k,
                                       const std::vector<double> &v,
                                       int64_t queries, int64_t keys,
                                       int64_t headDim, int64_t valueDim,
                                       bool causal, double scale) {
  std::vector<double> out(queries * valueDim, 0.0);
  for (int64_t i = 0; i < queries; ++i) {
    int64_t visible =
        causal ? std::max<int64_t>(0, std::min(keys, i + keys - queries + 1))
               : keys;
    std::vector<double> w(visible);
    double total = 0;
    for (int64_t j = 0; j < visible; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < headDim; ++d)
        dot += q[i * headDim + d] * k[j * headDim + d];
      total += (w[j] = std::exp(scale * dot));
    }
    for (int64_t j = 0; j < visible; ++j)
      for (int64_t e = 0; e < valueDim; ++e)
        out[i * valueDim + e] += w[j] / total * v[j * valueDim + e];
  }
  return out;
}

TEST_F(CpuBackendTest, AttentionGradMatchesFiniteDifferences) {
  std::vector<double> qs = {0.5, -1, 1, 0.25},
                      ks = {1, 0.5, -0.5, 2, 0.3, -0.7},
                      vs = {1, 2, -1, 0.5, 3, 1}, gs = {1, -2, 0.5, 1.5};
  for (bool causal : {false, true}) {
    HostTensor q({1, 1, 2, 2}, qs), k({1, 1, 3, 2}, ks), v({1, 1, 3, 2}, vs),
        g({1, 1, 2, 2}, gs), dq({1, 1, 2, 2}), dk({1, 1, 3, 2}),
        dv({1, 1, 3, 2});
    double scale = 0.8;
    backend->attentionGrad(refs({&q, &k, &v, &g, &dq, &dk, &dv}).data(), causal,
                           false, scale);
    auto with = [&](int which) {
      return [&, which](const std::vector<double> &x) {
        return attentionReference(which == 0 ? x : qs, which == 1 ? x : ks,
                                  which == 2 ? x : vs, 2, 3, 2, 2, causal,
                                  scale);
      };
    };
    expectNear(dq.values(), numericGradient(with(0), qs, gs), 1e-5);
    expectNear(dk.values(), numericGradient(with(1), ks, gs), 1e-5);
    expectNear(dv.values(), numericGradient(with(2), vs, gs), 1e-5);
  }
}

/// Deterministic values in [-1, 1) that differ element to element.
std::vector<double> wavy(int64_t count, double phase) {
  std::vector<double> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = std::sin(0.37 * i + phase);
  return values;
}

TEST_F(CpuBackendTest, AttentionOverSeveralQueryBlocks) {
  // 70 queries: a full block of 64 rows and a partial one; 75 keys, so
  // causal queries see 6..75 keys and blocks stop at different keys.
  const int64_t queries = 70, keys = 75, headDim = 3, valueDim = 2;
  std::vector<double> qs = wavy(queries * headDim, 0),
                      ks = wavy(keys * headDim, 1),
                      vs = wavy(keys * valueDim, 2),
                      gs = wavy(queries * valueDim, 3);
  for (bool causal : {false, true}) {
    HostTensor q({1, 1, queries, headDim}, qs), k({1, 1, keys, headDim}, ks),
        v({1, 1, keys, valueDim}, vs), g({1, 1, queries, valueDim}, gs),
        out({1, 1, queries, valueDim}), dq({1, 1, queries, headDim}),
        dk({1, 1, keys, headDim}), dv({1, 1, keys, valueDim});
    double scale = 1.3;
    backend->attention(refs({&q, &k, &v, &out}).data(), causal, false, scale);
    expectNear(out.values(),
               attentionReference(qs, ks, vs, queries, keys, headDim, valueDim,
                                  causal, scale),
               1e-5);
    backend->attentionGrad(refs({&q, &k, &v, &g, &dq, &dk, &dv}).data(), causal,
                           false, scale);
    auto with = [&](int which) {
      return [&, which](const std::vector<double> &x) {
        return attentionReference(which == 0 ? x : qs, which == 1 ? x : ks,
                                  which == 2 ? x : vs, queries, keys, headDim,
                                  valueDim, causal, scale);
      };
    };
    expectNear(dq.values(), numericGradient(with(0), qs, gs), 1e-4);
    expectNear(dk.values(), numericGradient(with(1), ks, gs), 1e-4);
    expectNear(dv.values(), numericGradient(with(2), vs, gs), 1e-4);
  }
}

TEST_F(CpuBackendTest, Conv2dPadsTopAndLeftOnly) {
  HostTensor x({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
      w({1, 1, 2, 2}, {1, 0, 0, -1}), y({1, 1, 3, 3});
  const int64_t geometry[] = {1, 1, 1, 1, 0, 0, 1, 1, 1};
  backend->conv2d(refs({&x, &w, &y}).data(), geometry);
  expectNear(y.values(), {-1, -2, -3, -4, -4, -4, -7, -4, -4});
}

/// Calls tap(y, x, w) with the flat NCHW indices of every product of
/// input x and weight w that conv2d sums into output y.
template <typename Tap>
void forEachConvolutionTap(const std::vector<int64_t> &xs,
                           const std::vector<int64_t> &ws,
                           const std::vector<int64_t> &ys,
                           const int64_t *geometry, Tap tap) {
  int64_t perGroup = ws[0] / geometry[8];
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t o = 0; o < ys[1]; ++o)
      for (int64_t r = 0; r < ys[2]; ++r)
        for (int64_t c = 0; c < ys[3]; ++c)
          for (int64_t i = 0; i < ws[1]; ++i)
            for (int64_t kr = 0; kr < ws[2]; ++kr)
              for (int64_t kc = 0; kc < ws[3]; ++kc) {
                int64_t row = r * geometry[0] - geometry[2] + kr * geometry[6];
                int64_t col = c * geometry[1] - geometry[3] + kc * geometry[7];
                if (row < 0 || row >= xs[2] || col < 0 || col >= xs[3])
                  continue;
                int64_t channel = o / perGroup * ws[1] + i;
                tap(((n * ys[1] + o) * ys[2] + r) * ys[3] + c,
                    ((n * xs[1] + channel) * xs[2] + row) * xs[3] + col,
                    ((o * ws[1] + i) * ws[2] + kr) * ws[3] + kc);
              }
}

/// conv2d by its definition, in double, over NCHW tensors.
std::vector<double> convolutionReference(const std::vector<double> &x,
                                         const std::vector<int64_t> &xs,
                                         const std::vector<double> &w,
                                         const std::vector<int64_t> &ws,
                                         const std::vector<int64_t> &ys,
                                         const int64_t *geometry) {
  std::vector<double> y(ys[0] * ys[1] * ys[2] * ys[3], 0.0);
  forEachConvolutionTap(
      xs, ws, ys, geometry,
      [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += x[xi] * w[wi]; });
  return y;
}

double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i)
    sum += a[i] * b[i];
  return sum;
}

TEST_F(CpuBackendTest, Conv2dAndItsGradientsAgreeWithTheDefinition) {
  // Strided, unevenly padded, dilated and grouped. The gradients are the
  // adjoints of the forward product: <conv(x, w), g> = <x, dx(w, g)> =
  // <w, dw(x, g)>.
  const int64_t geometry[] = {2, 1, 1, 0, 2, 1, 2, 2, 2};
  std::vector<int64_t> xs = {2, 4, 7, 6}, ws = {6, 2, 3, 2}, ys = {2, 6, 3, 5};
  std::vector<double> xv = wavy(2 * 4 * 7 * 6, 0.1),
                      wv = wavy(6 * 2 * 3 * 2, 1), gv = wavy(2 * 6 * 3 * 5, 2);
  // The results start as garbage: every kernel overwrites its result.
  auto garbage = [](int64_t count) { return std::vector<double>(count, 7.0); };
  HostTensor x(xs, xv), w(ws, wv), g(ys, gv), y(ys, garbage(gv.size())),
      dx(xs, garbage(xv.size())), dw(ws, garbage(wv.size()));
  backend->conv2d(refs({&x, &w, &y}).data(), geometry);
  std::vector<double> expected =
      convolutionReference(xv, xs, wv, ws, ys, geometry);
  expectNear(y.values(), expected, 1e-5);
  backend->conv2dInputGrad(refs({&w, &g, &dx}).data(), geometry);
  backend->conv2dWeightGrad(refs({&x, &g, &dw}).data(), geometry);
  double product = dot(expected, gv);
  EXPECT_NEAR(dot(xv, dx.values()), product, 1e-4 * std::abs(product));
  EXPECT_NEAR(dot(wv, dw.values()), product, 1e-4 * std::abs(product));
  // Each gradient element is its own adjoint product: a unit input picks it.
  std::vector<double> unit(xv.size(), 0.0);
  unit[5 * 6 + 3] = 1; // batch 0, channel 0, row 5, column 3
  HostTensor probe(xs, unit), probed(ys);
  backend->conv2d(refs({&probe, &w, &probed}).data(), geometry);
  EXPECT_NEAR(dx.values()[5 * 6 + 3], dot(probed.values(), gv), 1e-5);
}

TEST_F(CpuBackendTest, Conv2dOverChannelBlocksAgreesWithTheDefinition) {
  // Channels enough for oneDNN to run its blocked kernels (its layouts, not
  // the tensors' NCHW), and ResNet-18's last stage at CIFAR size: a 3 x 3
  // kernel over a 1 x 1 image, and a strided 1 x 1 one over 2 x 2.
  struct Case {
    std::vector<int64_t> xs, ws, ys;
    std::array<int64_t, 9> geometry;
  };
  for (const Case &c : {Case{{8, 64, 1, 1},
                             {48, 64, 3, 3},
                             {8, 48, 1, 1},
                             {1, 1, 1, 1, 1, 1, 1, 1, 1}},
                        Case{{4, 32, 2, 2},
                             {64, 32, 1, 1},
                             {4, 64, 1, 1},
                             {2, 2, 0, 0, 0, 0, 1, 1, 1}},
                        Case{{2, 24, 6, 5},
                             {40, 24, 3, 3},
                             {2, 40, 6, 5},
                             {1, 1, 1, 1, 1, 1, 1, 1, 1}}}) {
    auto count = [](const std::vector<int64_t> &shape) {
      return shape[0] * shape[1] * shape[2] * shape[3];
    };
    std::vector<double> xv = wavy(count(c.xs), 0.1), wv = wavy(count(c.ws), 1),
                        gv = wavy(count(c.ys), 2);
    std::vector<double> y(count(c.ys), 0.0), dx(xv.size(), 0.0),
        dw(wv.size(), 0.0);
    forEachConvolutionTap(c.xs, c.ws, c.ys, c.geometry.data(),
                          [&](int64_t yi, int64_t xi, int64_t wi) {
                            y[yi] += xv[xi] * wv[wi];
                            dx[xi] += gv[yi] * wv[wi];
                            dw[wi] += gv[yi] * xv[xi];
                          });
    HostTensor x(c.xs, xv), w(c.ws, wv), g(c.ys, gv), out(c.ys), xGrad(c.xs),
        wGrad(c.ws);
    backend->conv2d(refs({&x, &w, &out}).data(), c.geometry.data());
    backend->conv2dInputGrad(refs({&w, &g, &xGrad}).data(), c.geometry.data());
    backend->conv2dWeightGrad(refs({&x, &g, &wGrad}).data(), c.geometry.data());
    expectNear(out.values(), y, 1e-4);
    expectNear(xGrad.values(), dx, 1e-4);
    expectNear(wGrad.values(), dw, 1e-4);
  }
}

TEST_F(CpuBackendTest, Conv2dRejectsShapesThatDisagreeWithTheGeometry) {
  HostTensor x({1, 1, 3, 3}), w({1, 1, 2, 2}), y({1, 1, 3, 3});
  const int64_t geometry[] = {1, 1, 0, 0, 0, 0, 1, 1, 1};
  EXPECT_EXIT(backend->conv2d(refs({&x, &w, &y}).data(), geometry),
              ::testing::ExitedWithCode(1),
              "conv2d: the spatial sizes do not follow from the geometry");
}

TEST_F(CpuBackendTest, Poolings) {
  // The evaluator's cases: 2x2 windows, stride 1, one padded row above.
  const int64_t window[] = {2, 2, 1, 1, 1, 0, 0, 0, 1, 1};
  HostTensor x({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6}), y({1, 1, 2, 2});
  backend->maxPool2d(refs({&x, &y}).data(), window);
  expectNear(y.values(), {5, 5, 5, 6});
  backend->avgPool2d(refs({&x, &y}).data(), window, false);
  expectNear(y.values(), {3, 3.5, 3.25, 4});
  backend->avgPool2d(refs({&x, &y}).data(), window, true);
  expectNear(y.values(), {1.5, 1.75, 3.25, 4});
  // The gradients: max sends each window's gradient to its maximum (5
  // wins three windows), the average shares it among the window's inputs.
  HostTensor g({1, 1, 2, 2}, {1, 2, 4, 8}),
      dx({1, 1, 2, 3}, {9, 9, 9, 9, 9, 9});
  backend->maxPool2dGrad(refs({&x, &g, &dx}).data(), window);
  expectNear(dx.values(), {0, 7, 0, 0, 0, 8});
  backend->avgPool2dGrad(refs({&g, &dx}).data(), window, false);
  expectNear(dx.values(), {0.5 + 1, 0.5 + 1 + 1 + 2, 1 + 2, 1, 1 + 2, 2});
}

TEST_F(CpuBackendTest, MaxPoolingTakesTheFirstMaximumAndAnyNaN) {
  const int64_t window[] = {2, 2, 1, 1, 0, 0, 0, 0, 1, 1};
  float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor x({1, 1, 2, 2}, {1, 3, 3, 2}), g({1, 1, 1, 1}, {7}),
      dx({1, 1, 2, 2}), y({1, 1, 1, 1});
  backend->maxPool2dGrad(refs({&x, &g, &dx}).data(), window);
  expectNear(dx.values(), {0, 7, 0, 0});
  HostTensor withNaN({1, 1, 2, 2}, {1, nan, 3, 2});
  backend->maxPool2d(refs({&withNaN, &y}).data(), window);
  EXPECT_TRUE(std::isnan(y.values()[0]));
}

TEST_F(CpuBackendTest, KernelsGiveTheSameResultsOnTwoThreads) {
  // Sizes above cpu::elementGrain, so that two threads split the work. The
  // thread count is the process's: each run makes its backend first.
  auto both = [&](std::vector<HostTensor> tensors, size_t results, auto &&run) {
    std::vector<HostTensor> copy = tensors;
    std::vector<HostTensor *> one, two;
    for (size_t i = 0; i < tensors.size(); ++i) {
      one.push_back(&tensors[i]);
      two.push_back(&copy[i]);
    }
    run(*createCpuBackend(mesh, 1), refs(one).data());
    run(*createCpuBackend(mesh, 2), refs(two).data());
    for (size_t i = tensors.size() - results; i < tensors.size(); ++i)
      EXPECT_EQ(tensors[i].values(), copy[i].values()) << "result " << i;
  };
  const int64_t rows = 40, columns = 1000;
  HostTensor x({rows, columns}, wavy(rows * columns, 0)),
      bias({columns}, wavy(columns, 1)), matrix({rows, columns});
  both({x, bias, matrix}, 1,
       [](Backend &b, const TensorRef *t) { b.binary('+', t); });
  int64_t sumAxis = 0;
  both({x, HostTensor({columns})}, 1, [&](Backend &b, const TensorRef *t) {
    b.reduce(Backend::Reduce::Sum, t, &sumAxis, 1);
  });
  int64_t perm[] = {1, 0};
  both({x, HostTensor({columns, rows})}, 1,
       [&](Backend &b, const TensorRef *t) { b.transpose(t, perm); });
  int64_t offsets[] = {0, 1}, strides[] = {1, 2};
  both({HostTensor({rows, columns / 2}, wavy(rows * columns / 2, 2)),
        HostTensor({rows, columns})},
       1, [&](Backend &b, const TensorRef *t) {
         b.sliceGrad(t, offsets, strides);
       });
  both({x, HostTensor({rows, columns})}, 1,
       [](Backend &b, const TensorRef *t) { b.unary(Backend::Unary::Erf, t); });
  HostTensor labels({rows}, std::vector<double>(rows, 7), PARCRT_I32);
  both({x, labels, HostTensor({})}, 1,
       [](Backend &b, const TensorRef *t) { b.crossEntropy(t); });
  // Attention: 4 query heads on 2 key/value heads, 3 query blocks.
  const int64_t heads = 4, kvHeads = 2, seq = 130, dim = 4;
  HostTensor q({2, heads, seq, dim}, wavy(2 * heads * seq * dim, 3)),
      k({2, kvHeads, seq, dim}, wavy(2 * kvHeads * seq * dim, 4)),
      v({2, kvHeads, seq, dim}, wavy(2 * kvHeads * seq * dim, 5)),
      g({2, heads, seq, dim}, wavy(2 * heads * seq * dim, 6));
  both(
      {q, k, v, HostTensor({2, heads, seq, dim})}, 1,
      [](Backend &b, const TensorRef *t) { b.attention(t, true, false, 0.5); });
  both({q, k, v, g, HostTensor({2, heads, seq, dim}),
        HostTensor({2, kvHeads, seq, dim}), HostTensor({2, kvHeads, seq, dim})},
       3, [](Backend &b, const TensorRef *t) {
         b.attentionGrad(t, true, false, 0.5);
       });
  backend = createCpuBackend(mesh, 1);
}

TEST_F(CpuBackendTest, CausalAttentionGradOfAQueryThatSeesNoKeyIsZero) {
  // Two queries, one key, causal: query 0 sees nothing.
  HostTensor q({1, 1, 2, 1}, {1, 2}), k({1, 1, 1, 1}, {3}),
      v({1, 1, 1, 1}, {4}), g({1, 1, 2, 1}, {5, 6}), dq({1, 1, 2, 1}, {9, 9}),
      dk({1, 1, 1, 1}), dv({1, 1, 1, 1});
  backend->attentionGrad(refs({&q, &k, &v, &g, &dq, &dk, &dv}).data(), true,
                         false, 1.0);
  expectNear(dq.values(), {0, 0});
  expectNear(dv.values(), {6});
}

TEST_F(CpuBackendTest, AdamWStepsByTheFormula) {
  double lr = 0.1, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, decay = 0.01;
  HostTensor p({2}, {1, -2}), g({2}, {0.5, 0.25}), m({2}), v({2}),
      step({}, {1}), p1({2}), m1({2}), v1({2});
  backend->adamwUpdate(refs({&p, &g, &m, &v, &step, &p1, &m1, &v1}).data(),
                       false, lr, beta1, beta2, eps, decay);
  // Step 1: the corrected moments are g and g^2, so the update is
  // lr * (sign(g) + decay * p) up to eps.
  expectNear(m1.values(), {0.05, 0.025});
  expectNear(v1.values(), {0.00025, 0.0000625});
  expectNear(p1.values(), {1 - lr * (0.5 / (0.5 + eps) + decay * 1),
                           -2 - lr * (0.25 / (0.25 + eps) + decay * -2)});
  // Step 2 from the new state, in place (results over the operands).
  HostTensor g2({2}, {-1, 0}), step2({}, {2});
  std::vector<double> p1v = p1.values(), m1v = m1.values(), v1v = v1.values();
  backend->adamwUpdate(refs({&p1, &g2, &m1, &v1, &step2, &p1, &m1, &v1}).data(),
                       false, lr, beta1, beta2, eps, decay);
  std::vector<double> expectedP, expectedM, expectedV;
  for (int i = 0; i < 2; ++i) {
    double gi = g2.values()[i];
    double mi = beta1 * m1v[i] + (1 - beta1) * gi;
    double vi = beta2 * v1v[i] + (1 - beta2) * gi * gi;
    double mhat = mi / (1 - beta1 * beta1), vhat = vi / (1 - beta2 * beta2);
    expectedM.push_back(mi);
    expectedV.push_back(vi);
    expectedP.push_back(p1v[i] -
                        lr * (mhat / (std::sqrt(vhat) + eps) + decay * p1v[i]));
  }
  expectNear(p1.values(), expectedP);
  expectNear(m1.values(), expectedM);
  expectNear(v1.values(), expectedV, 1e-9);
}

TEST_F(CpuBackendTest, SgdWithMomentum) {
  HostTensor p({2}, {1, 2}), g({2}, {0.5, -1}), b({2}, {0.2, 0}), p1({2}),
      b1({2});
  backend->sgdUpdate(refs({&p, &g, &b, &p1, &b1}).data(), false, 0.1, 0.9);
  expectNear(b1.values(), {0.68, -1});
  expectNear(p1.values(), {0.932, 2.1});
  // momentum 0 is plain SGD.
  backend->sgdUpdate(refs({&p, &g, &b, &p1, &b1}).data(), false, 0.1, 0.0);
  expectNear(b1.values(), {0.5, -1});
  expectNear(p1.values(), {0.95, 2.1});
}

// An f32 condition is true when nonzero, NaN included (the overflow flag of
// loss scaling).
TEST_F(CpuBackendTest, SelectOnAFloatCondition) {
  HostTensor condition({3}, {0, NAN, 2}), onTrue({3}, {1, 2, 3}),
      onFalse({3}, {4, 5, 6}), out({3});
  backend->select(refs({&condition, &onTrue, &onFalse, &out}).data());
  expectNear(out.values(), {4, 2, 3});
}

// A set `skip` (an overflowed f16 step: NaN, or any nonzero value) leaves
// the state as it was, copied to separate results or untouched in place; 0
// updates as without it.
TEST_F(CpuBackendTest, SkippedUpdatesKeepTheState) {
  HostTensor p({2}, {1, -2}), g({2}, {INFINITY, NAN}), m({2}, {0.5, 0.25}),
      v({2}, {0.1, 0.2}), step({}, {3}), p1({2}), m1({2}), v1({2});
  for (float value : {NAN, 1.0f}) {
    HostTensor skip({}, {value});
    backend->adamwUpdate(
        refs({&p, &g, &m, &v, &step, &skip, &p1, &m1, &v1}).data(), true, 0.1,
        0.9, 0.999, 1e-8, 0.01);
    expectNear(p1.values(), p.values());
    expectNear(m1.values(), m.values());
    expectNear(v1.values(), v.values());
    backend->adamwUpdate(
        refs({&p, &g, &m, &v, &step, &skip, &p, &m, &v}).data(), true, 0.1, 0.9,
        0.999, 1e-8, 0.01);
    expectNear(p.values(), {1, -2});
    HostTensor b({2}, {0.2, 0}), b1({2});
    backend->sgdUpdate(refs({&p, &g, &b, &skip, &p1, &b1}).data(), true, 0.1,
                       0.9);
    expectNear(p1.values(), {1, -2});
    expectNear(b1.values(), {0.2, 0});
  }
  HostTensor finite({2}, {0.5, -1}), b({2}, {0.2, 0}), zero({}, {0}), b1({2});
  backend->sgdUpdate(refs({&p, &finite, &b, &zero, &p1, &b1}).data(), true, 0.1,
                     0.9);
  expectNear(b1.values(), {0.68, -1});
  expectNear(p1.values(), {0.932, -1.9});
}

TEST_F(CpuBackendTest, ClipCoefficient) {
  HostTensor big({}, {16}), small({}, {0.25}), out({});
  backend->clipCoefficient(refs({&big, &out}).data(), 1.0);
  expectNear(out.values(), {1 / (4 + 1e-6)});
  backend->clipCoefficient(refs({&small, &out}).data(), 1.0);
  expectNear(out.values(), {1});
}

TEST_F(CpuBackendTest, GradientOpsRejectOtherDtypes) {
  HostTensor x({2}, {1, 2}, PARCRT_I32), g({2}), out({2});
  EXPECT_EXIT(backend->activationGrad(Backend::Activation::Relu,
                                      refs({&x, &g, &out}).data()),
              ::testing::ExitedWithCode(1),
              "activation_grad: the cpu backend computes in f32 only.*i32");
  HostTensor p({1}), state({1}, {}, PARCRT_I64);
  EXPECT_EXIT(
      backend->sgdUpdate(refs({&p, &p, &state, &p, &p}).data(), false, 1, 0),
      ::testing::ExitedWithCode(1), "sgd_update: .*tensor 2 .*i64");
}

/// Builds parcrt.h descriptors for tensors laid out one after another in an
/// arena.
struct Program {
  size_t add(const HostTensor &t) {
    size_t offset = arena.size();
    arena.insert(arena.end(), t.bytes.begin(), t.bytes.end());
    std::vector<int64_t> words(PARCRT_TENSOR_WORDS, 0);
    words[0] = offset;
    words[1] = t.dtype;
    words[2] = t.shape.size();
    for (size_t d = 0; d < t.shape.size(); ++d)
      words[3 + d] = t.shape[d];
    descriptors.insert(descriptors.end(), words.begin(), words.end());
    return offset;
  }
  std::vector<float> floats(size_t offset, size_t count) {
    std::vector<float> out(count);
    std::memcpy(out.data(), arena.data() + offset, count * sizeof(float));
    return out;
  }
  std::vector<uint8_t> arena;
  std::vector<int64_t> descriptors;
};

/// The entry points over one rank's cpu backend; each test points
/// `ctx.arena` at its own tensors.
class EntryTest : public testing::Test {
protected:
  EntryTest() {
    ctx.backend = backend.get();
    ctx.mesh = mesh;
  }

  MeshInfo mesh{{}, {}, 0};
  std::unique_ptr<Backend> backend = createCpuBackend(mesh);
  parcrt_context ctx;
};

TEST_F(EntryTest, DecodesDescriptorsAndAttributes) {
  Program program;
  program.add(HostTensor({2, 2}, {1, 2, 3, 4}));
  program.add(HostTensor({2, 1}, {1, 1}));
  size_t result = program.add(HostTensor({2, 1}));
  ctx.arena = program.arena.data();
  int64_t transposeLhs[] = {1, 0, 0, 1, 1, 1};
  parcrt_matmul(&ctx, program.descriptors.data(), transposeLhs, nullptr);
  std::vector<float> out = program.floats(result, 2);
  EXPECT_EQ(out, (std::vector<float>{4, 6}));

  Program reduction;
  reduction.add(HostTensor({2, 3}, {1, 2, 3, 4, 5, 6}));
  size_t kept = reduction.add(HostTensor({2, 1}));
  ctx.arena = reduction.arena.data();
  int64_t axesKeepdims[] = {1, 1, 1};
  parcrt_reduce_sum(&ctx, reduction.descriptors.data(), axesKeepdims, nullptr);
  EXPECT_EQ(reduction.floats(kept, 2), (std::vector<float>{6, 15}));

  Program constant;
  size_t splat = constant.add(HostTensor({3}));
  ctx.arena = constant.arena.data();
  int64_t one[] = {1};
  double value[] = {0.25};
  parcrt_constant(&ctx, constant.descriptors.data(), one, value);
  EXPECT_EQ(constant.floats(splat, 3), (std::vector<float>{0.25, 0.25, 0.25}));
}

// matrix_dims: x [2, 3] times w [3, 2, 2] with two column dimensions is
// x times w as [3, 4]; its gradient g [2, 2, 2] times w transposed
// contracts the two. Both against the plain product.
TEST_F(EntryTest, MergesMatrixGroups) {
  std::vector<float> x = {1, -2, 3, 0.5f, 4, -1};
  std::vector<float> w = {1, 2, 3, 4, -1, 0, 2, 5, 0.25f, -3, 1, 2};
  Program columns;
  columns.add(HostTensor({2, 3}, {x.begin(), x.end()}));
  columns.add(HostTensor({3, 2, 2}, {w.begin(), w.end()}));
  size_t y = columns.add(HostTensor({2, 2, 2}));
  ctx.arena = columns.arena.data();
  int64_t twoColumns[] = {0, 0, 0, 1, 1, 2};
  parcrt_matmul(&ctx, columns.descriptors.data(), twoColumns, nullptr);
  std::vector<float> expected(8, 0.0f);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        expected[i * 4 + j] += x[i * 3 + k] * w[k * 4 + j];
  EXPECT_EQ(columns.floats(y, 8), expected);

  Program contracting;
  contracting.add(HostTensor({2, 2, 2}, {expected.begin(), expected.end()}));
  contracting.add(HostTensor({3, 2, 2}, {w.begin(), w.end()}));
  size_t dx = contracting.add(HostTensor({2, 3}));
  ctx.arena = contracting.arena.data();
  int64_t twoContracting[] = {0, 1, 0, 1, 2, 1};
  parcrt_matmul(&ctx, contracting.descriptors.data(), twoContracting, nullptr);
  std::vector<float> gradient(6, 0.0f);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < 4; ++j)
        gradient[i * 3 + k] += expected[i * 4 + j] * w[k * 4 + j];
  EXPECT_EQ(contracting.floats(dx, 6), gradient);
}

/// bf16 values as stored, built bit by bit (no conversion under test).
std::vector<uint16_t> bf16Words(const std::vector<float> &exact) {
  std::vector<uint16_t> words;
  for (float value : exact) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    EXPECT_EQ(bits & 0xFFFF, 0u) << value << " is not a bf16 value";
    words.push_back(static_cast<uint16_t>(bits >> 16));
  }
  return words;
}

TEST_F(EntryTest, Bf16TensorsComputeInF32AndRoundOnce) {
  // [1, 1] x [[1, 1], [2^-8, 3 * 2^-8]]: 1 + 2^-8 and 1 + 3 * 2^-8 lie
  // halfway between bf16 neighbours (spacing 2^-7 at 1) and round to even.
  std::vector<uint16_t> arena = bf16Words({1, 1, 1, 1, 0x1p-8f, 0x3p-8f});
  arena.resize(arena.size() + 2);
  auto descriptor = [](int64_t offset, std::vector<int64_t> shape) {
    std::vector<int64_t> words(PARCRT_TENSOR_WORDS, 0);
    words[0] = offset;
    words[1] = PARCRT_BF16;
    words[2] = static_cast<int64_t>(shape.size());
    std::copy(shape.begin(), shape.end(), words.begin() + 3);
    return words;
  };
  std::vector<int64_t> descriptors;
  for (auto words :
       {descriptor(0, {1, 2}), descriptor(4, {2, 2}), descriptor(12, {1, 2})})
    descriptors.insert(descriptors.end(), words.begin(), words.end());
  ctx.arena = reinterpret_cast<uint8_t *>(arena.data());
  int64_t plain[] = {0, 0, 0, 1, 1, 1};
  parcrt_matmul(&ctx, descriptors.data(), plain, nullptr);
  EXPECT_EQ(arena[6], 0x3F80); // 1 + 2^-8 -> 1
  EXPECT_EQ(arena[7], 0x3F82); // 1 + 3 * 2^-8 -> 1 + 2^-6

  // In place (the result is the lhs): the operand is widened before the
  // result is rounded back over it.
  std::vector<int64_t> inPlace;
  for (auto words :
       {descriptor(12, {1, 2}), descriptor(0, {1, 2}), descriptor(12, {1, 2})})
    inPlace.insert(inPlace.end(), words.begin(), words.end());
  parcrt_add(&ctx, inPlace.data(), nullptr, nullptr);
  EXPECT_EQ(arena[6], 0x4000); // 1 + 1
  EXPECT_EQ(arena[7], 0x4001); // (1 + 2^-6) + 1 = 2 + 2^-6 -> 2 + 2^-6
}

TEST_F(EntryTest, GradientAndOptimizerOpsTakeOperandsThenResults) {

  // layer_norm_grad: x, gamma, g; dx, dgamma, dbeta. floats: [epsilon].
  Program norm;
  norm.add(HostTensor({2, 2}, {1, 3, 2, 6}));
  norm.add(HostTensor({2}, {1, 1}));
  norm.add(HostTensor({2, 2}, {1, 0, 0, 1}));
  size_t dx = norm.add(HostTensor({2, 2}));
  size_t dgamma = norm.add(HostTensor({2}));
  size_t dbeta = norm.add(HostTensor({2}));
  ctx.arena = norm.arena.data();
  double epsilon[] = {0.0};
  parcrt_layer_norm_grad(&ctx, norm.descriptors.data(), nullptr, epsilon);
  // Both rows normalize to xhat = {-1, 1}: dgamma = sum g * xhat = {-1, 1},
  // dbeta = sum g = {1, 1}. Each row of g is a constant plus a multiple of
  // xhat, both of which layer_norm removes, so dx = 0.
  EXPECT_EQ(norm.floats(dgamma, 2), (std::vector<float>{-1, 1}));
  EXPECT_EQ(norm.floats(dbeta, 2), (std::vector<float>{1, 1}));
  for (float value : norm.floats(dx, 4))
    EXPECT_NEAR(value, 0, 1e-7);

  // sgd_update: param, grad, buffer; param', buffer'. ints: [has_skip],
  // floats: [lr, momentum].
  Program sgd;
  sgd.add(HostTensor({1}, {1}));
  sgd.add(HostTensor({1}, {2}));
  sgd.add(HostTensor({1}, {1}));
  size_t param = sgd.add(HostTensor({1}));
  size_t buffer = sgd.add(HostTensor({1}));
  ctx.arena = sgd.arena.data();
  double sgdFloats[] = {0.5, 0.5};
  int64_t noSkip[] = {0};
  parcrt_sgd_update(&ctx, sgd.descriptors.data(), noSkip, sgdFloats);
  EXPECT_EQ(sgd.floats(buffer, 1), std::vector<float>{2.5});
  EXPECT_EQ(sgd.floats(param, 1), std::vector<float>{-0.25});

  // adamw_update: param, grad, m, v, step; param', m', v'.
  Program adam;
  adam.add(HostTensor({1}, {1}));
  adam.add(HostTensor({1}, {2}));
  adam.add(HostTensor({1}));
  adam.add(HostTensor({1}));
  adam.add(HostTensor({}, {1}));
  size_t newParam = adam.add(HostTensor({1}));
  size_t m = adam.add(HostTensor({1}));
  size_t v = adam.add(HostTensor({1}));
  ctx.arena = adam.arena.data();
  double adamFloats[] = {0.5, 0.5, 0.75, 0.0, 0.0};
  parcrt_adamw_update(&ctx, adam.descriptors.data(), noSkip, adamFloats);
  EXPECT_EQ(adam.floats(m, 1), std::vector<float>{1});
  EXPECT_EQ(adam.floats(v, 1), std::vector<float>{1});
  EXPECT_EQ(adam.floats(newParam, 1), std::vector<float>{0.5});

  // With a skip operand (ints: [1]) that is set, after step and before the
  // results: the results are the state operands.
  Program skipped;
  skipped.add(HostTensor({1}, {1}));
  skipped.add(HostTensor({1}, {2}));
  skipped.add(HostTensor({1}, {0.25}));
  skipped.add(HostTensor({1}, {0.5}));
  skipped.add(HostTensor({}, {1}));
  skipped.add(HostTensor({}, {NAN}));
  size_t keptParam = skipped.add(HostTensor({1}));
  size_t keptM = skipped.add(HostTensor({1}));
  size_t keptV = skipped.add(HostTensor({1}));
  ctx.arena = skipped.arena.data();
  int64_t withSkip[] = {1};
  parcrt_adamw_update(&ctx, skipped.descriptors.data(), withSkip, adamFloats);
  EXPECT_EQ(skipped.floats(keptParam, 1), std::vector<float>{1});
  EXPECT_EQ(skipped.floats(keptM, 1), std::vector<float>{0.25});
  EXPECT_EQ(skipped.floats(keptV, 1), std::vector<float>{0.5});

  // embedding_grad with a shard: ids, g, shard; table. ints: [has_shard].
  Program embedding;
  embedding.add(HostTensor({2}, {1, 2}, PARCRT_I64));
  embedding.add(HostTensor({2, 1}, {3, 4}));
  embedding.add(HostTensor({}, {1}, PARCRT_I32));
  size_t table = embedding.add(HostTensor({2, 1}));
  ctx.arena = embedding.arena.data();
  int64_t hasShard[] = {1};
  parcrt_embedding_grad(&ctx, embedding.descriptors.data(), hasShard, nullptr);
  EXPECT_EQ(embedding.floats(table, 2), (std::vector<float>{4, 0}));

  // slice_grad: ints [offsets.., strides..].
  Program slice;
  slice.add(HostTensor({2}, {1, 2}));
  size_t placed = slice.add(HostTensor({4}));
  ctx.arena = slice.arena.data();
  int64_t offsetsStrides[] = {1, 2};
  parcrt_slice_grad(&ctx, slice.descriptors.data(), offsetsStrides, nullptr);
  EXPECT_EQ(slice.floats(placed, 4), (std::vector<float>{0, 1, 0, 2}));

  // activation_grad: ints [kind]; an unknown kind ends the job.
  Program activation;
  activation.add(HostTensor({2}, {-1, 1}));
  activation.add(HostTensor({2}, {3, 3}));
  size_t grad = activation.add(HostTensor({2}));
  ctx.arena = activation.arena.data();
  int64_t relu[] = {0}, bogus[] = {6};
  parcrt_activation_grad(&ctx, activation.descriptors.data(), relu, nullptr);
  EXPECT_EQ(activation.floats(grad, 2), (std::vector<float>{0, 3}));
  EXPECT_EXIT(parcrt_activation_grad(&ctx, activation.descriptors.data(), bogus,
                                     nullptr),
              ::testing::ExitedWithCode(1), "unknown activation kind 6");

  // clip_coefficient: floats [max_norm].
  Program clip;
  clip.add(HostTensor({}, {100}));
  size_t coefficient = clip.add(HostTensor({}));
  ctx.arena = clip.arena.data();
  double maxNorm[] = {5.0};
  parcrt_clip_coefficient(&ctx, clip.descriptors.data(), nullptr, maxNorm);
  EXPECT_NEAR(clip.floats(coefficient, 1)[0], 0.5, 1e-6);
}

TEST(MeshInfoTest, CoordinatesAreMixedRadixDigitsLastAxisMinor) {
  MeshInfo mesh{{"dp", "tp"}, {2, 4}, 6};
  EXPECT_EQ(mesh.numRanks(), 8);
  EXPECT_EQ(mesh.coordinate(0), 1);
  EXPECT_EQ(mesh.coordinate(1), 2);
}

TEST(MeshInfoTest, GroupsAreOrderedByTheirAxesFirstMajor) {
  MeshInfo mesh{{"a", "b", "c"}, {2, 3, 2}, 7}; // coordinates (1, 0, 1)
  EXPECT_EQ(mesh.group({1}), (std::vector<int>{7, 9, 11}));
  EXPECT_EQ(mesh.indexInGroup({1}), 0);
  EXPECT_EQ(mesh.group({0}), (std::vector<int>{1, 7}));
  EXPECT_EQ(mesh.indexInGroup({0}), 1);
  // [c, a]: c major, a minor.
  EXPECT_EQ(mesh.group({2, 0}), (std::vector<int>{0, 6, 1, 7}));
  EXPECT_EQ(mesh.indexInGroup({2, 0}), 3);
  EXPECT_EQ(mesh.group({0, 2}), (std::vector<int>{0, 1, 6, 7}));
  EXPECT_EQ(mesh.indexInGroup({0, 2}), 3);
  EXPECT_EQ(mesh.group({}), (std::vector<int>{7}));
  EXPECT_EQ(mesh.indexInGroup({}), 0);
}

// 4 workers [ps, dp, dpr, tp] = [2, 2, 2, 2] x ... and 2 servers
// [2, 2, 1, 2]: world ranks 0-7 are the workers, 8-11 the servers.
MeshInfo stagedRank(int rank) {
  parc::StagedMeshes stages({parc::MeshShape({2, 2, 2, 2}),
                             parc::MeshShape({2, 2, 1, 2})});
  int64_t stage = stages.getStage(rank);
  MeshInfo mesh{{"ps", "dp", "dpr", "tp"},
                stages.getMesh(stage).getSizes(),
                rank,
                stages,
                stage};
  return mesh;
}

TEST(MeshInfoTest, StagesOnMeshesOfTheirOwnFollowEachOther) {
  MeshInfo server = stagedRank(11); // server (dp 1, tp 1)
  EXPECT_EQ(server.stage, 1);
  EXPECT_EQ(server.coordinate(0), 1);
  EXPECT_EQ(server.coordinate(1), 1);
  EXPECT_EQ(server.coordinate(3), 1);
  EXPECT_EQ(server.group({1}), (std::vector<int>{9, 11}));
  EXPECT_EQ(server.indexInGroup({1}), 1);
  // Worker (dp 1, dpr 0, tp 1), as a server addresses it.
  int64_t toWorker[] = {0, 0, 1, 1, 2, 0};
  EXPECT_EQ(server.peer(3, toWorker), 5);
  // A worker's own server keeps the worker's dp and tp.
  MeshInfo worker = stagedRank(7); // (dp 1, dpr 1, tp 1)
  EXPECT_EQ(worker.group({1, 2}), (std::vector<int>{1, 3, 5, 7}));
  int64_t toOwnServer[] = {0, 1, 2, 0};
  EXPECT_EQ(worker.peer(2, toOwnServer), 11);
  int64_t outside[] = {0, 1, 2, 1};
  EXPECT_EQ(worker.peer(2, outside), -1);
  int64_t noStage[] = {0, 2};
  EXPECT_EQ(worker.peer(1, noStage), -1);
  // Over the stage axis: every rank, each stage's in its mesh, stage-major.
  std::vector<int> everyRank(12);
  for (int rank = 0; rank < 12; ++rank)
    everyRank[rank] = rank;
  EXPECT_EQ(worker.group({0, 1, 2, 3}), everyRank);
  // A server's coordinates hold only the workers of dpr 0.
  EXPECT_EQ(stagedRank(5).group({0}), (std::vector<int>{5, 11}));
  EXPECT_EQ(worker.group({0}), (std::vector<int>{7}));
}

} // namespace
