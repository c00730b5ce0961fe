//===- AttentionScores.h - one query's attention weights -------*- C++ -*-===//
//
// The reference's softmax(scale * q k^T + mask) for one (batch, head,
// query), shared by attention and its gradient: the causal limit, the
// broadcast mask, the key/value head of a grouped query head, and the rule
// that a query seeing no key (or only -inf scores) has all-zero weights.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_INTERP_ATTENTIONSCORES_H
#define PARC_LIB_INTERP_ATTENTIONSCORES_H

#include "parc/Interp/Tensor.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mlir::parc::interp {

class AttentionScores {
public:
  AttentionScores(const Tensor &query, const Tensor &key, const Tensor *mask,
                  bool causal, double scale)
      : query(query), key(key), mask(mask), causal(causal), scale(scale),
        group(key.shape[1] ? query.shape[1] / key.shape[1] : 1),
        weights(key.shape[2]) {}

  /// The key/value head that query head `h` reads.
  int64_t kvHead(int64_t h) const { return h / group; }

  /// The weights of query `i` of head `h` in batch `b` over keys
  /// [0, getVisible()).
  const std::vector<double> &probabilities(int64_t b, int64_t h, int64_t i) {
    int64_t queries = query.shape[2], keys = key.shape[2],
            headDim = query.shape[3];
    // Queries align with the last `queries` keys, so query i sees keys
    // j <= i + (keys - queries).
    visible = causal ? std::clamp<int64_t>(i + keys - queries + 1, 0, keys)
                     : keys;
    double maxScore = -INFINITY;
    for (int64_t j = 0; j < visible; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < headDim; ++d)
        dot += query.at({b, h, i, d}) * key.at({b, kvHead(h), j, d});
      weights[j] = scale * dot + maskAt(b, h, i, j);
      maxScore = std::max(maxScore, weights[j]);
    }
    double total = 0;
    for (int64_t j = 0; j < visible; ++j)
      total += (weights[j] = maxScore == -INFINITY
                                 ? 0.0
                                 : std::exp(weights[j] - maxScore));
    for (int64_t j = 0; j < visible; ++j)
      weights[j] = total > 0 ? weights[j] / total : 0.0;
    return weights;
  }

  int64_t getVisible() const { return visible; }

private:
  double maskAt(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!mask)
      return 0.0;
    auto broadcast = [&](int64_t dim, int64_t index) {
      return mask->shape[dim] == 1 ? 0 : index;
    };
    return mask->at({broadcast(0, b), broadcast(1, h), broadcast(2, i), j});
  }

  const Tensor &query, &key;
  const Tensor *mask;
  bool causal;
  double scale;
  int64_t group;
  int64_t visible = 0;
  std::vector<double> weights;
};

} // namespace mlir::parc::interp

#endif // PARC_LIB_INTERP_ATTENTIONSCORES_H
