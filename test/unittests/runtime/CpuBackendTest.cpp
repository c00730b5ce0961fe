//===- CpuBackendTest.cpp - cpu kernels against hand-computed values ------===//
//
// The cases of test/unittests/Interp/EvaluatorTest.cpp, run through the
// cpu backend (and, for a few, through the C entry points of parcrt.h).
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "parcrt/Backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

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

TEST_F(CpuBackendTest, MatmulWithTransposedBroadcastWeight) {
  // lhs [2, 1, 2] (batch 2), rhs [3, 2] used transposed as [2, 3].
  HostTensor a({2, 1, 2}, {1, 2, 3, 4}), w({3, 2}, {1, 0, 0, 1, 1, 1}),
      out({2, 1, 3});
  backend->matmul(refs({&a, &w, &out}).data(), false, true);
  expectNear(out.values(), {1, 2, 3, 3, 4, 7});
}

TEST_F(CpuBackendTest, MatmulWithTransposedLhs) {
  HostTensor a({2, 2}, {1, 2, 3, 4}), b({2, 1}, {1, 1}), out({2, 1});
  backend->matmul(refs({&a, &b, &out}).data(), true, false);
  expectNear(out.values(), {4, 6});
}

TEST_F(CpuBackendTest, MatmulBroadcastsTheLhsOverRhsBatches) {
  // lhs [2, 2] shared by both rhs batches [2, 2, 1].
  HostTensor a({2, 2}, {1, 2, 3, 4}), b({2, 2, 1}, {1, 0, 0, 1}),
      out({2, 2, 1});
  backend->matmul(refs({&a, &b, &out}).data(), false, false);
  expectNear(out.values(), {1, 3, 2, 4});
}

TEST_F(CpuBackendTest, MatmulBatchesBothOperands) {
  // [2, 1, 2] x [2, 2, 1] with rhs transposed from [2, 1, 2].
  HostTensor a({2, 1, 2}, {1, 2, 3, 4}), b({2, 1, 2}, {1, 1, 2, 0}),
      out({2, 1, 1});
  backend->matmul(refs({&a, &b, &out}).data(), false, true);
  expectNear(out.values(), {3, 6});
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
  backend->attention(refs({&q, &k, &v, &out}).data(), true, 0.5);
  double w0 = std::exp(1.0), w1 = std::exp(3.0);
  expectNear(out.values(), {10, (10 * w0 + 20 * w1) / (w0 + w1)}, 1e-5);
}

TEST_F(CpuBackendTest, CausalAttentionAlignsQueriesWithTheLastKeys) {
  // One query, two keys: the query is the last position and sees both.
  HostTensor q({1, 1, 1, 1}, {0}), k({1, 1, 2, 1}, {0, 0}),
      v({1, 1, 2, 1}, {2, 4}), out({1, 1, 1, 1});
  backend->attention(refs({&q, &k, &v, &out}).data(), true, 1.0);
  expectNear(out.values(), {3});
}

TEST_F(CpuBackendTest, NonCausalAttentionSeesAllKeys) {
  HostTensor q({1, 1, 1, 1}, {1}), k({1, 1, 2, 1}, {0, 0}),
      v({1, 1, 2, 2}, {1, 2, 3, 4}), out({1, 1, 1, 2});
  backend->attention(refs({&q, &k, &v, &out}).data(), false, 1.0);
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

TEST(EntryTest, DecodesDescriptorsAndAttributes) {
  MeshInfo mesh{{}, {}, 0};
  std::unique_ptr<Backend> backend = createCpuBackend(mesh);
  Program program;
  program.add(HostTensor({2, 2}, {1, 2, 3, 4}));
  program.add(HostTensor({2, 1}, {1, 1}));
  size_t result = program.add(HostTensor({2, 1}));
  parcrt_context ctx;
  ctx.backend = backend.get();
  ctx.arena = program.arena.data();
  ctx.mesh = mesh;
  int64_t transposeLhs[] = {1, 0};
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

} // namespace
