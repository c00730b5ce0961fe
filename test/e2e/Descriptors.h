//===- Descriptors.h - descriptors for hand-written programs ----*- C++ -*-===//

#ifndef PARC_TEST_E2E_DESCRIPTORS_H
#define PARC_TEST_E2E_DESCRIPTORS_H

#include "parcrt/parcrt.h"

#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

/// Descriptors of tensors (offset, shape) of f32 elements, as the `tensors`
/// argument of a parcrt_* call.
inline std::vector<int64_t>
tensors(std::initializer_list<std::pair<int64_t, std::vector<int64_t>>> list) {
  std::vector<int64_t> words;
  for (const auto &[offset, shape] : list) {
    std::vector<int64_t> one(PARCRT_TENSOR_WORDS, 0);
    one[0] = offset;
    one[1] = PARCRT_F32;
    one[2] = shape.size();
    for (size_t d = 0; d < shape.size(); ++d)
      one[3 + d] = shape[d];
    words.insert(words.end(), one.begin(), one.end());
  }
  return words;
}

#endif // PARC_TEST_E2E_DESCRIPTORS_H
