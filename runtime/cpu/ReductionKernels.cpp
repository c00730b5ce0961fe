//===- ReductionKernels.cpp - reduce_sum, _mean, _max, _log_sum_exp -------===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"
#include "cpu/Parallel.h"
#include "cpu/Rows.h"

#include <algorithm>
#include <cmath>

using namespace parcrt;

/// Each dimension's stride into the totals of `in` reduced over `reduced`
/// (0 along a reduced dimension).
static std::vector<int64_t> getTotalStrides(const TensorRef &in,
                                            const std::vector<bool> &reduced) {
  TensorRef kept = in;
  for (int dim = 0; dim < in.rank; ++dim)
    if (reduced[dim])
      kept.shape[dim] = 1;
  std::vector<int64_t> strides = cpu::rowMajorStrides(kept);
  for (int dim = 0; dim < in.rank; ++dim)
    if (reduced[dim])
      strides[dim] = 0;
  return strides;
}

/// Calls `visit(target, value)` for every element of `in`, in row-major
/// order, with `target` the position of its total among the kept
/// dimensions (the same whether or not the result keeps size-1 dims).
template <typename Visit>
static void visitReduced(const TensorRef &in, const std::vector<bool> &reduced,
                         Visit &&visit) {
  const auto *values = static_cast<const float *>(in.data);
  // The common layouts first: the reduced dimensions one contiguous block,
  // between kept outer and kept inner ones (the classes of a log-sum-exp,
  // the batch of weight gradients summed as [B, K, N] over B).
  int first = 0, last = in.rank;
  while (first < in.rank && !reduced[first])
    ++first;
  while (last > first && !reduced[last - 1])
    --last;
  if (std::all_of(reduced.begin() + first, reduced.begin() + last,
                  [](bool r) { return r; })) {
    int64_t outer = 1, block = 1, inner = 1;
    for (int dim = 0; dim < in.rank; ++dim)
      (dim < first ? outer : dim < last ? block : inner) *= in.shape[dim];
    // Threads take disjoint totals: bands of outer positions, or with one
    // outer position bands of inner ones; each adds its values in order.
    auto visitBand = [&](int64_t o, int64_t innerBegin, int64_t innerEnd) {
      const float *rows = values + o * block * inner;
      for (int64_t r = 0; r < block; ++r)
        for (int64_t i = innerBegin; i < innerEnd; ++i)
          visit(o * inner + i, rows[r * inner + i]);
    };
    if (outer == 1) {
      cpu::parallelFor(
          inner, cpu::rowGrain(block),
          [&](int64_t begin, int64_t end) { visitBand(0, begin, end); });
      return;
    }
    cpu::parallelFor(outer, cpu::rowGrain(block * inner),
                     [&](int64_t begin, int64_t end) {
                       for (int64_t o = begin; o < end; ++o)
                         visitBand(o, 0, inner);
                     });
    return;
  }
  // Any other layout: row by row in row-major order, each row's totals
  // found from its index (a reduced dimension's stride into them is 0).
  std::vector<int64_t> keptStrides = getTotalStrides(in, reduced);
  int64_t length = in.shape[in.rank - 1], step = keptStrides[in.rank - 1];
  if (length == 0)
    return;
  cpu::forEachRow<1>(in.shape, in.rank, {keptStrides.data()}, 0,
                     in.numElements() / length,
                     [&](int64_t row, const std::array<int64_t, 1> &target) {
                       const float *line = values + row * length;
                       for (int64_t j = 0; j < length; ++j)
                         visit(target[0] + j * step, line[j]);
                     });
}

/// Reduces `in` where its trailing dimensions are reduced and the reduced
/// ones do not form one block (a batch norm's statistics over [N, C, H, W]
/// keep C between N and H, W, which visitReduced would walk element by
/// element on one thread): each trailing row is reduced on its own by
/// `reduceRow(row, length)`, rows in parallel, and the rows' results then
/// go into their totals in row order by `combine(total, rowResult)`. False,
/// having done nothing, for any other layout.
template <typename ReduceRow, typename Combine>
static bool reduceTrailingRows(const TensorRef &in,
                               const std::vector<bool> &reduced,
                               ReduceRow &&reduceRow, Combine &&combine,
                               std::vector<double> &totals) {
  int first = in.rank;
  while (first > 0 && reduced[first - 1])
    --first;
  if (first == in.rank || first == 0)
    return false;
  int64_t length = 1;
  for (int dim = first; dim < in.rank; ++dim)
    length *= in.shape[dim];
  if (length == 0)
    return true;
  int64_t rows = in.numElements() / length;
  const auto *values = static_cast<const float *>(in.data);
  std::vector<double> rowResults(rows);
  cpu::parallelFor(
      rows, cpu::rowGrain(length), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row)
          rowResults[row] = reduceRow(values + row * length, length);
      });
  // Each row's total, walking the leading dimensions with the trailing ones
  // as one row.
  std::vector<int64_t> shape(in.shape, in.shape + first);
  shape.push_back(length);
  std::vector<int64_t> strides = getTotalStrides(in, reduced);
  strides.resize(first + 1);
  cpu::forEachRow<1>(shape.data(), first + 1, {strides.data()}, 0, rows,
                     [&](int64_t row, const std::array<int64_t, 1> &target) {
                       combine(totals[target[0]], rowResults[row]);
                     });
  return true;
}

static double rowSum(const float *row, int64_t length) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < length; ++i)
    sum += row[i];
  return sum;
}

static double rowMaximum(const float *row, int64_t length) {
  float maximum = -INFINITY;
  for (int64_t i = 0; i < length; ++i)
    maximum = std::max(maximum, row[i]);
  return maximum;
}

static const char *reductionName(Backend::Reduce op) {
  switch (op) {
  case Backend::Reduce::Sum:
    return "reduce_sum";
  case Backend::Reduce::Mean:
    return "reduce_mean";
  case Backend::Reduce::Max:
    return "reduce_max";
  case Backend::Reduce::LogSumExp:
    return "reduce_log_sum_exp";
  }
  return "reduce";
}

void cpu::reduce(Backend::Reduce op, const TensorRef *t, const int64_t *axes,
                 int numAxes) {
  requireF32(reductionName(op), t, 2);
  const TensorRef &in = t[0];
  std::vector<bool> reduced(in.rank, false);
  int64_t count = 1;
  for (int i = 0; i < numAxes; ++i) {
    reduced[axes[i]] = true;
    count *= in.shape[axes[i]];
  }
  // Totals in double: an f32 result does not depend on the order the
  // layout paths add in (but where double rounding ties).
  std::vector<double> totals(t[1].numElements(), 0.0);
  bool trailing = std::all_of(reduced.begin() + (in.rank - numAxes),
                              reduced.end(), [](bool r) { return r; });
  auto add = [](double &total, double value) { total += value; };
  if (op == Backend::Reduce::Sum || op == Backend::Reduce::Mean) {
    if (!reduceTrailingRows(in, reduced, rowSum, add, totals))
      visitReduced(in, reduced, [&](int64_t target, float value) {
        add(totals[target], value);
      });
  } else if (op == Backend::Reduce::LogSumExp && trailing) {
    // Over the trailing dimensions (a vocabulary-parallel loss's
    // normalizer): each line contiguous, exponentiated by oneDNN.
    rowLogSumExp(static_cast<const float *>(in.data), totals.size(), count,
                 totals.data());
  } else {
    std::vector<double> maxima(totals.size(), -INFINITY);
    auto raise = [](double &maximum, double value) {
      maximum = std::max(maximum, value);
    };
    if (!reduceTrailingRows(in, reduced, rowMaximum, raise, maxima))
      visitReduced(in, reduced, [&](int64_t target, float value) {
        raise(maxima[target], value);
      });
    if (op == Backend::Reduce::Max) {
      totals = std::move(maxima);
    } else {
      // An all -inf line sums nothing (its result is -inf); +inf stays.
      visitReduced(in, reduced, [&](int64_t target, float value) {
        if (std::isfinite(maxima[target]))
          totals[target] += std::exp(value - maxima[target]);
      });
      for (size_t i = 0; i < totals.size(); ++i)
        totals[i] = std::isfinite(maxima[i]) ? maxima[i] + std::log(totals[i])
                                             : maxima[i];
    }
  }
  auto *out = static_cast<float *>(t[1].data);
  for (size_t i = 0; i < totals.size(); ++i)
    out[i] = static_cast<float>(op == Backend::Reduce::Mean ? totals[i] / count
                                                            : totals[i]);
}
