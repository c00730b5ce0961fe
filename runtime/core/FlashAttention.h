//===- FlashAttention.h - the cuda backend's tiled attention ----*- C++ -*-===//
//
// Flash attention (FlashAttention-2, Dao 2023) as the cuda kernels run it: a
// block of threads takes a tile of query rows (in the keys' gradient, a tile
// of keys) and streams the tiles of the other side through shared memory,
// with an online softmax, so that no [queries, keys] matrix is ever held and
// each score is computed once per pass.
//
// The algorithm is written once, over a `Block` whose forEach(n, f) runs f
// on 0..n-1 spread over the block's threads and then waits at a barrier
// (each step's iterations are independent of each other). The cuda kernels
// run it with a block of threads; the host unit test runs it one iteration
// after the other, so the cuda arithmetic is checked where no GPU exists.
//
// The gradient needs each query row's log-sum-exp of scores and the dot
// product of its output with the output's gradient (FlashAttention-2's
// D_i): the forward pass writes them as `rowStats` when asked to, and the
// gradient's first kernel is that pass.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_FLASHATTENTION_H
#define PARCRT_CORE_FLASHATTENTION_H

#include "core/ElementMath.h"

#include <cmath>
#include <cstdint>

namespace parcrt::math::flash {

/// One attention call: its operands and the results a pass writes (null
/// where the pass does not write them).
struct Operands {
  AttentionShape shape;
  bool causal = false;
  float scale = 1;
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  /// The output's gradient (gradient passes only).
  const float *g = nullptr;
  float *out = nullptr;
  /// Two floats per query row (b, h, i): the log-sum-exp of its scores
  /// (+inf when it sees no key or only -inf scores) and g . out.
  float *rowStats = nullptr;
  float *dq = nullptr, *dk = nullptr, *dv = nullptr;

  PARCRT_HOST_DEVICE bool sees(int64_t i, int64_t j) const {
    return j < visibleKeys(causal, i, shape.queries, shape.keys);
  }
  /// Query i's score for key j of query head `head` (b * H + h): q_i.k_j
  /// scaled, plus the mask's entry; -inf for a key it does not see.
  PARCRT_HOST_DEVICE float score(int64_t head, int64_t i, int64_t j,
                                 const float *queryRow,
                                 const float *keyRow) const {
    if (!sees(i, j))
      return -INFINITY;
    float dot = 0;
    for (int64_t d = 0; d < shape.headDim; ++d)
      dot += queryRow[d] * keyRow[d];
    const float *mask = shape.maskRow(head, i);
    return scale * dot + (mask ? mask[j] : 0.0f);
  }
};

/// Carves a pass's tiles out of one block of shared memory: with a null
/// base it only counts, so the host can choose a tile size that fits.
class SharedCarver {
public:
  PARCRT_HOST_DEVICE explicit SharedCarver(float *base) : base(base) {}
  PARCRT_HOST_DEVICE float *take(int64_t floats) {
    float *taken = base ? base + used : nullptr;
    used += floats;
    return taken;
  }
  PARCRT_HOST_DEVICE int64_t floats() const { return used; }

private:
  float *base;
  int64_t used = 0;
};

/// `count` rows of `width` floats with a padded stride: threads that read
/// one column of consecutive rows hit different shared-memory banks.
struct TileRows {
  float *data = nullptr;
  int64_t stride = 0;

  PARCRT_HOST_DEVICE TileRows(SharedCarver &carver, int64_t count,
                              int64_t width)
      : stride(width + 1) {
    data = carver.take(count * stride);
  }
  PARCRT_HOST_DEVICE float *row(int64_t r) const { return data + r * stride; }
};

/// The `count` rows from `first` of tile `tile` over `length` rows.
struct TileSpan {
  int64_t first, count;
};
PARCRT_HOST_DEVICE inline TileSpan tileSpan(int64_t tile, int64_t tileSize,
                                            int64_t length) {
  int64_t first = tile * tileSize;
  return {first, length - first < tileSize ? length - first : tileSize};
}

/// What a query tile's passes read: its rows (`first` .. `first + rows`
/// of query head `head`, `row0` = its first row overall), the keys they
/// see between them (those of its last query), and the keys and values of
/// its key/value head.
struct QueryTile {
  int64_t first, rows, row0, width;
  const float *keys, *values;

  PARCRT_HOST_DEVICE QueryTile(const Operands &op, int64_t tileSize,
                               int64_t head, int64_t tile) {
    const AttentionShape &shape = op.shape;
    TileSpan span = tileSpan(tile, tileSize, shape.queries);
    first = span.first;
    rows = span.count;
    row0 = head * shape.queries + first;
    width = visibleKeys(op.causal, first + rows - 1, shape.queries, shape.keys);
    int64_t kvHead = shape.kvHeadOf(head);
    keys = op.k + kvHead * shape.keys * shape.headDim;
    values = op.v + kvHead * shape.keys * shape.valueDim;
  }
};

/// Loads `count` rows of two matrices into their tiles (q and k rows of
/// headDim floats into `a`, g and v rows of valueDim floats into `b`).
template <typename Block>
PARCRT_HOST_DEVICE void loadRows(const Block &block, int64_t count,
                                 const TileRows &a, const float *aSource,
                                 int64_t aWidth, const TileRows &b,
                                 const float *bSource, int64_t bWidth) {
  block.forEach(count * aWidth,
                [&](int64_t i) { a.row(i / aWidth)[i % aWidth] = aSource[i]; });
  block.forEach(count * bWidth,
                [&](int64_t i) { b.row(i / bWidth)[i % bWidth] = bSource[i]; });
}

//===----------------------------------------------------------------------===//
// Forward: one block per (query head, query tile)
//===----------------------------------------------------------------------===//

struct ForwardTiles {
  TileRows q, k, v, scores;
  float *acc, *maximum, *total, *rescale;

  PARCRT_HOST_DEVICE ForwardTiles(SharedCarver &carver, int64_t rows,
                                  int64_t headDim, int64_t valueDim)
      : q(carver, rows, headDim), k(carver, rows, headDim),
        v(carver, rows, valueDim), scores(carver, rows, rows),
        acc(carver.take(rows * valueDim)), maximum(carver.take(rows)),
        total(carver.take(rows)), rescale(carver.take(rows)) {}
};

/// Attention of query tile `tile` of query head `head`: writes the output
/// rows (when `out`) and their rowStats (when `rowStats`, which needs g).
template <typename Block>
PARCRT_HOST_DEVICE void forward(const Block &block, const Operands &op,
                                int64_t tileSize, int64_t head, int64_t tile,
                                float *shared) {
  int64_t headDim = op.shape.headDim, valueDim = op.shape.valueDim;
  QueryTile queryTile(op, tileSize, head, tile);
  int64_t first = queryTile.first, rows = queryTile.rows, row0 = queryTile.row0,
          width = queryTile.width;
  SharedCarver carver(shared);
  ForwardTiles t(carver, tileSize, headDim, valueDim);

  block.forEach(rows * headDim, [&](int64_t i) {
    t.q.row(i / headDim)[i % headDim] = op.q[row0 * headDim + i];
  });
  block.forEach(rows * valueDim, [&](int64_t i) { t.acc[i] = 0; });
  block.forEach(rows, [&](int64_t r) {
    t.maximum[r] = -INFINITY;
    t.total[r] = 0;
  });
  for (int64_t j0 = 0; j0 < width; j0 += tileSize) {
    int64_t cols = width - j0 < tileSize ? width - j0 : tileSize;
    loadRows(block, cols, t.k, queryTile.keys + j0 * headDim, headDim, t.v,
             queryTile.values + j0 * valueDim, valueDim);
    block.forEach(rows * cols, [&](int64_t i) {
      int64_t r = i / cols, c = i % cols;
      t.scores.row(r)[c] =
          op.score(head, first + r, j0 + c, t.q.row(r), t.k.row(c));
    });
    // The online softmax: each row's running maximum, the factor that
    // rescales what it summed so far, and this tile's weights in place of
    // the scores.
    block.forEach(rows, [&](int64_t r) {
      float *s = t.scores.row(r);
      float previous = t.maximum[r], maximum = previous;
      for (int64_t c = 0; c < cols; ++c)
        maximum = s[c] > maximum ? s[c] : maximum;
      using std::exp;
      // Only -inf so far: nothing summed, no weight.
      bool none = maximum == -INFINITY;
      float sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        s[c] = none ? 0.0f : exp(s[c] - maximum);
        sum += s[c];
      }
      float rescale = none ? 1.0f : exp(previous - maximum);
      t.total[r] = t.total[r] * rescale + sum;
      t.maximum[r] = maximum;
      t.rescale[r] = rescale;
    });
    block.forEach(rows * valueDim, [&](int64_t i) {
      int64_t r = i / valueDim, e = i % valueDim;
      const float *p = t.scores.row(r);
      float sum = t.acc[i] * t.rescale[r];
      for (int64_t c = 0; c < cols; ++c)
        sum += p[c] * t.v.row(c)[e];
      t.acc[i] = sum;
    });
  }
  // A query that sees no key (or only -inf scores) gets zeros.
  if (op.out)
    block.forEach(rows * valueDim, [&](int64_t i) {
      float total = t.total[i / valueDim];
      op.out[row0 * valueDim + i] = total > 0 ? t.acc[i] / total : 0.0f;
    });
  if (op.rowStats)
    block.forEach(rows, [&](int64_t r) {
      int64_t row = row0 + r;
      float total = t.total[r], weighted = 0;
      const float *g = op.g + row * valueDim;
      for (int64_t e = 0; e < valueDim; ++e)
        weighted += g[e] * t.acc[r * valueDim + e];
      using std::log;
      op.rowStats[2 * row] = total > 0 ? t.maximum[r] + log(total) : INFINITY;
      op.rowStats[2 * row + 1] = total > 0 ? weighted / total : 0.0f;
    });
}

//===----------------------------------------------------------------------===//
// Gradient
//===----------------------------------------------------------------------===//

/// dS_ij = scale p_ij (g_i . v_j - D_i), with p_ij recomputed from the
/// score and the row's log-sum-exp (0 for a key the query does not see).
struct ScoreGradient {
  float weight, gradient;
};

PARCRT_HOST_DEVICE inline ScoreGradient
scoreGradient(const Operands &op, int64_t head, int64_t i, int64_t j,
              const float *queryRow, const float *keyRow,
              const float *gradientRow, const float *valueRow, float logSumExp,
              float weighted) {
  float score = op.score(head, i, j, queryRow, keyRow);
  if (score == -INFINITY)
    return {0, 0};
  using std::exp;
  // A row without a finite score has logSumExp = +inf: p = 0.
  float p = exp(score - logSumExp);
  float dp = 0;
  for (int64_t e = 0; e < op.shape.valueDim; ++e)
    dp += gradientRow[e] * valueRow[e];
  return {p, op.scale * p * (dp - weighted)};
}

/// Query rows row0.. row0 + count - 1's log-sum-exp and g . out.
template <typename Block>
PARCRT_HOST_DEVICE void loadRowStats(const Block &block, const Operands &op,
                                     int64_t row0, int64_t count,
                                     float *logSumExp, float *weighted) {
  block.forEach(count, [&](int64_t r) {
    logSumExp[r] = op.rowStats[2 * (row0 + r)];
    weighted[r] = op.rowStats[2 * (row0 + r) + 1];
  });
}

struct QueryGradientTiles {
  TileRows q, g, k, v, scores;
  float *dq, *logSumExp, *weighted;

  PARCRT_HOST_DEVICE QueryGradientTiles(SharedCarver &carver, int64_t rows,
                                        int64_t headDim, int64_t valueDim)
      : q(carver, rows, headDim), g(carver, rows, valueDim),
        k(carver, rows, headDim), v(carver, rows, valueDim),
        scores(carver, rows, rows), dq(carver.take(rows * headDim)),
        logSumExp(carver.take(rows)), weighted(carver.take(rows)) {}
};

/// dq of query tile `tile` of query head `head`: sum_j dS_ij k_j.
template <typename Block>
PARCRT_HOST_DEVICE void queryGradient(const Block &block, const Operands &op,
                                      int64_t tileSize, int64_t head,
                                      int64_t tile, float *shared) {
  int64_t headDim = op.shape.headDim, valueDim = op.shape.valueDim;
  QueryTile queryTile(op, tileSize, head, tile);
  int64_t first = queryTile.first, rows = queryTile.rows, row0 = queryTile.row0,
          width = queryTile.width;
  SharedCarver carver(shared);
  QueryGradientTiles t(carver, tileSize, headDim, valueDim);

  loadRows(block, rows, t.q, op.q + row0 * headDim, headDim, t.g,
           op.g + row0 * valueDim, valueDim);
  loadRowStats(block, op, row0, rows, t.logSumExp, t.weighted);
  block.forEach(rows * headDim, [&](int64_t i) { t.dq[i] = 0; });
  for (int64_t j0 = 0; j0 < width; j0 += tileSize) {
    int64_t cols = width - j0 < tileSize ? width - j0 : tileSize;
    loadRows(block, cols, t.k, queryTile.keys + j0 * headDim, headDim, t.v,
             queryTile.values + j0 * valueDim, valueDim);
    block.forEach(rows * cols, [&](int64_t i) {
      int64_t r = i / cols, c = i % cols;
      t.scores.row(r)[c] =
          scoreGradient(op, head, first + r, j0 + c, t.q.row(r), t.k.row(c),
                        t.g.row(r), t.v.row(c), t.logSumExp[r], t.weighted[r])
              .gradient;
    });
    block.forEach(rows * headDim, [&](int64_t i) {
      int64_t r = i / headDim, d = i % headDim;
      const float *ds = t.scores.row(r);
      float sum = t.dq[i];
      for (int64_t c = 0; c < cols; ++c)
        sum += ds[c] * t.k.row(c)[d];
      t.dq[i] = sum;
    });
  }
  block.forEach(rows * headDim,
                [&](int64_t i) { op.dq[row0 * headDim + i] = t.dq[i]; });
}

struct KeyGradientTiles {
  TileRows k, v, q, g, weights, scores;
  float *dk, *dv, *logSumExp, *weighted;

  PARCRT_HOST_DEVICE KeyGradientTiles(SharedCarver &carver, int64_t rows,
                                      int64_t headDim, int64_t valueDim)
      : k(carver, rows, headDim), v(carver, rows, valueDim),
        q(carver, rows, headDim), g(carver, rows, valueDim),
        weights(carver, rows, rows), scores(carver, rows, rows),
        dk(carver.take(rows * headDim)), dv(carver.take(rows * valueDim)),
        logSumExp(carver.take(rows)), weighted(carver.take(rows)) {}
};

/// dk and dv of key tile `tile` of key/value head `kvHead` (b * Hkv + h):
/// dk_j = sum_i dS_ij q_i and dv_j = sum_i p_ij g_i over the query heads of
/// its group and the queries that see the tile's first key (zeros for a
/// key no query sees).
template <typename Block>
PARCRT_HOST_DEVICE void keyGradient(const Block &block, const Operands &op,
                                    int64_t tileSize, int64_t kvHead,
                                    int64_t tile, float *shared) {
  const AttentionShape &shape = op.shape;
  int64_t headDim = shape.headDim, valueDim = shape.valueDim,
          queries = shape.queries;
  TileSpan span = tileSpan(tile, tileSize, shape.keys);
  int64_t first = span.first, cols = span.count;
  int64_t group = shape.heads / shape.kvHeads;
  int64_t firstHead = shape.firstHeadOf(kvHead);
  int64_t key0 = kvHead * shape.keys + first;
  SharedCarver carver(shared);
  KeyGradientTiles t(carver, tileSize, headDim, valueDim);

  loadRows(block, cols, t.k, op.k + key0 * headDim, headDim, t.v,
           op.v + key0 * valueDim, valueDim);
  block.forEach(cols * headDim, [&](int64_t i) { t.dk[i] = 0; });
  block.forEach(cols * valueDim, [&](int64_t i) { t.dv[i] = 0; });
  // Queries before the one that sees the tile's first key see none of it.
  int64_t firstQuery = firstQuerySeeing(op.causal, first, queries, shape.keys);
  for (int64_t head = firstHead; head < firstHead + group; ++head)
    for (int64_t i0 = firstQuery; i0 < queries; i0 += tileSize) {
      int64_t rows = queries - i0 < tileSize ? queries - i0 : tileSize;
      int64_t row0 = head * queries + i0;
      loadRows(block, rows, t.q, op.q + row0 * headDim, headDim, t.g,
               op.g + row0 * valueDim, valueDim);
      loadRowStats(block, op, row0, rows, t.logSumExp, t.weighted);
      block.forEach(rows * cols, [&](int64_t i) {
        int64_t r = i / cols, c = i % cols;
        ScoreGradient s = scoreGradient(op, head, i0 + r, first + c, t.q.row(r),
                                        t.k.row(c), t.g.row(r), t.v.row(c),
                                        t.logSumExp[r], t.weighted[r]);
        t.weights.row(r)[c] = s.weight;
        t.scores.row(r)[c] = s.gradient;
      });
      block.forEach(cols * headDim, [&](int64_t i) {
        int64_t c = i / headDim, d = i % headDim;
        float sum = t.dk[i];
        for (int64_t r = 0; r < rows; ++r)
          sum += t.scores.row(r)[c] * t.q.row(r)[d];
        t.dk[i] = sum;
      });
      block.forEach(cols * valueDim, [&](int64_t i) {
        int64_t c = i / valueDim, e = i % valueDim;
        float sum = t.dv[i];
        for (int64_t r = 0; r < rows; ++r)
          sum += t.weights.row(r)[c] * t.g.row(r)[e];
        t.dv[i] = sum;
      });
    }
  block.forEach(cols * headDim,
                [&](int64_t i) { op.dk[key0 * headDim + i] = t.dk[i]; });
  block.forEach(cols * valueDim,
                [&](int64_t i) { op.dv[key0 * valueDim + i] = t.dv[i]; });
}

/// The shared floats of pass `Tiles` (ForwardTiles, QueryGradientTiles or
/// KeyGradientTiles) at tile size `rows`.
template <typename Tiles>
int64_t sharedFloats(int64_t rows, int64_t headDim, int64_t valueDim) {
  SharedCarver carver(nullptr);
  Tiles tiles(carver, rows, headDim, valueDim);
  return carver.floats();
}

/// The largest tile size (rows of queries and keys alike; a power of two,
/// 64 at most) at which pass `Tiles` fits `budgetFloats` of shared memory;
/// 0 when not even one row does.
template <typename Tiles>
int64_t tileRows(int64_t headDim, int64_t valueDim, int64_t budgetFloats) {
  for (int64_t rows = 64; rows >= 1; rows /= 2)
    if (sharedFloats<Tiles>(rows, headDim, valueDim) <= budgetFloats)
      return rows;
  return 0;
}

} // namespace parcrt::math::flash

#endif // PARCRT_CORE_FLASHATTENTION_H
