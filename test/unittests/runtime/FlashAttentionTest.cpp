//===- FlashAttentionTest.cpp - the cuda attention's algorithm on the host ===//
//
// The cuda backend's attention kernels run core/FlashAttention.h with a
// block of threads; here it runs one iteration after the other, block after
// block, against the cpu backend's attention and its gradient, over tile
// sizes that split queries and keys unevenly, causal and not, grouped
// key/value heads, a broadcast additive mask with -inf entries and rows,
// and more and fewer keys than queries.
//
//===----------------------------------------------------------------------===//

#include "core/FlashAttention.h"
#include "parcrt/Backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace parcrt;
namespace flash = parcrt::math::flash;

namespace {

/// A block whose iterations run one after the other on the host.
struct SequentialBlock {
  template <typename F> void forEach(int64_t n, F f) const {
    for (int64_t i = 0; i < n; ++i)
      f(i);
  }
};

struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> values;

  Tensor(std::vector<int64_t> shape, double phase = 0) : shape(shape) {
    int64_t count = 1;
    for (int64_t size : shape)
      count *= size;
    values.resize(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = phase ? static_cast<float>(std::sin(0.37 * i + phase)) : 0;
  }
  TensorRef ref() {
    TensorRef t;
    t.data = values.data();
    t.dtype = PARCRT_F32;
    t.rank = static_cast<int>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      t.shape[d] = shape[d];
    return t;
  }
};

void expectClose(const Tensor &actual, const Tensor &expected,
                 const char *what) {
  ASSERT_EQ(actual.values.size(), expected.values.size());
  for (size_t i = 0; i < actual.values.size(); ++i)
    EXPECT_NEAR(actual.values[i], expected.values[i],
                2e-5 * (1 + std::abs(expected.values[i])))
        << what << " element " << i;
}

struct Case {
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;
  bool causal, mask;
  int64_t tileRows;
};

/// Runs `pass` (whose shared memory is `Tiles`) on every (head, tile) a
/// kernel launch would.
template <typename Tiles, typename Pass>
void runBlocks(const Case &c, int64_t heads, int64_t length, Pass pass) {
  std::vector<float> shared(
      flash::sharedFloats<Tiles>(c.tileRows, c.headDim, c.valueDim));
  int64_t tiles = (length + c.tileRows - 1) / c.tileRows;
  SequentialBlock block;
  for (int64_t head = 0; head < heads; ++head)
    for (int64_t tile = 0; tile < tiles; ++tile) {
      // Each block starts from garbage, as a kernel's shared memory does:
      // a read before a write shows.
      std::fill(shared.begin(), shared.end(), NAN);
      pass(block, head, tile, shared.data());
    }
}

void check(const Case &c) {
  SCOPED_TRACE(::testing::Message()
               << "B " << c.batch << " H " << c.heads << "/" << c.kvHeads
               << " S " << c.queries << " T " << c.keys << " D " << c.headDim
               << " E " << c.valueDim << " causal " << c.causal << " mask "
               << c.mask << " tile " << c.tileRows);
  Tensor q({c.batch, c.heads, c.queries, c.headDim}, 1),
      k({c.batch, c.kvHeads, c.keys, c.headDim}, 2),
      v({c.batch, c.kvHeads, c.keys, c.valueDim}, 3),
      g({c.batch, c.heads, c.queries, c.valueDim}, 4),
      // Broadcast over the batch; query 1 of head 0 sees only -inf.
      mask({1, c.heads, c.queries, c.keys}, 5);
  for (int64_t j = 0; j < c.keys; ++j) {
    mask.values[j * 3 % mask.values.size()] = -INFINITY;
    mask.values[(c.queries > 1 ? c.keys : 0) + j] = -INFINITY;
  }
  double scale = 0.6;
  MeshInfo mesh{{}, {}, 0};
  std::unique_ptr<Backend> cpu = createCpuBackend(mesh, 1);

  Tensor expectedOut({c.batch, c.heads, c.queries, c.valueDim});
  std::vector<TensorRef> forwardRefs = {q.ref(), k.ref(), v.ref()};
  if (c.mask)
    forwardRefs.push_back(mask.ref());
  forwardRefs.push_back(expectedOut.ref());
  cpu->attention(forwardRefs.data(), c.causal, c.mask, scale);

  Tensor dq({c.batch, c.heads, c.queries, c.headDim}),
      dk({c.batch, c.kvHeads, c.keys, c.headDim}),
      dv({c.batch, c.kvHeads, c.keys, c.valueDim});
  std::vector<TensorRef> gradRefs = {q.ref(), k.ref(), v.ref(), g.ref()};
  if (c.mask)
    gradRefs.push_back(mask.ref());
  for (Tensor *result : {&dq, &dk, &dv})
    gradRefs.push_back(result->ref());
  cpu->attentionGrad(gradRefs.data(), c.causal, c.mask, scale);

  TensorRef maskRef = mask.ref();
  TensorRef qRef = q.ref(), kRef = k.ref(), vRef = v.ref();
  flash::Operands op;
  op.shape =
      math::attentionShape(qRef, kRef, vRef, c.mask ? &maskRef : nullptr);
  op.causal = c.causal;
  op.scale = static_cast<float>(scale);
  op.q = q.values.data();
  op.k = k.values.data();
  op.v = v.values.data();
  int64_t queryHeads = c.batch * c.heads, keyHeads = c.batch * c.kvHeads;
  auto forward = [&] {
    runBlocks<flash::ForwardTiles>(
        c, queryHeads, c.queries,
        [&](SequentialBlock &block, int64_t head, int64_t tile, float *shared) {
          flash::forward(block, op, c.tileRows, head, tile, shared);
        });
  };

  Tensor out({c.batch, c.heads, c.queries, c.valueDim});
  op.out = out.values.data();
  forward();
  expectClose(out, expectedOut, "out");

  std::vector<float> rowStats(2 * queryHeads * c.queries);
  Tensor flashDq(dq.shape), flashDk(dk.shape), flashDv(dv.shape);
  op.out = nullptr;
  op.g = g.values.data();
  op.rowStats = rowStats.data();
  op.dq = flashDq.values.data();
  op.dk = flashDk.values.data();
  op.dv = flashDv.values.data();
  forward();
  runBlocks<flash::QueryGradientTiles>(
      c, queryHeads, c.queries,
      [&](SequentialBlock &block, int64_t head, int64_t tile, float *shared) {
        flash::queryGradient(block, op, c.tileRows, head, tile, shared);
      });
  runBlocks<flash::KeyGradientTiles>(
      c, keyHeads, c.keys,
      [&](SequentialBlock &block, int64_t head, int64_t tile, float *shared) {
        flash::keyGradient(block, op, c.tileRows, head, tile, shared);
      });
  expectClose(flashDq, dq, "dq");
  expectClose(flashDk, dk, "dk");
  expectClose(flashDv, dv, "dv");
}

TEST(FlashAttentionTest, MatchesTheCpuBackend) {
  for (bool causal : {false, true})
    for (bool mask : {false, true}) {
      // Tiles that split queries and keys unevenly, one-row tiles, and one
      // tile wider than everything.
      check({2, 4, 2, 13, 13, 5, 3, causal, mask, 4});
      check({1, 2, 2, 7, 11, 3, 6, causal, mask, 1});
      check({1, 3, 1, 9, 5, 4, 4, causal, mask, 64});
      check({1, 2, 1, 70, 75, 8, 8, causal, mask, 16});
    }
}

TEST(FlashAttentionTest, TileRowsFitTheBudget) {
  for (int64_t dim : {1, 64, 128, 256}) {
    int64_t rows = flash::tileRows<flash::KeyGradientTiles>(dim, dim, 12288);
    ASSERT_GT(rows, 0);
    EXPECT_LE(flash::sharedFloats<flash::KeyGradientTiles>(rows, dim, dim),
              12288);
    if (rows < 64) {
      EXPECT_GT(
          flash::sharedFloats<flash::KeyGradientTiles>(2 * rows, dim, dim),
          12288);
    }
  }
  EXPECT_EQ(flash::tileRows<flash::ForwardTiles>(100000, 1, 12288), 0);
}

} // namespace
