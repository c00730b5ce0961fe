//===- Init.h - Deterministic counter-based initialization ------*- C++ -*-===//
//
// Parameters and synthetic inputs are initialized from (seed, tensor name,
// global element index) alone, so every rank computes exactly its own slice
// and a partitioned run starts from the same values as the serial reference.
// The scheme is specified in docs/initialization.md.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_INIT_H
#define PARCRT_INIT_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace parcrt {

enum class InitDistribution { Normal, Uniform, Constant };

/// normal(mean = first, std = second), uniform(low = first, high = second) or
/// constant(value = first).
struct InitSpec {
  InitDistribution distribution;
  double first;
  double second;
};

/// The per-tensor stream key: FNV-1a 64 of `name`, mixed with `seed`.
uint64_t tensorKey(uint64_t seed, std::string_view name);

/// 64 random bits at position `counter` of the stream `key`; a pure function.
uint64_t counterBits(uint64_t key, uint64_t counter);

/// The value of element `globalIndex` of the tensor whose stream is `key`.
/// With `integer`, the value is floored (uniform is also clamped to high - 1,
/// so uniform(0, V) yields ids in [0, V)).
double initValue(const InitSpec &spec, uint64_t key, uint64_t globalIndex,
                 bool integer);

/// Writes the values of global indices [begin, begin + count) to `out`.
void initValues(const InitSpec &spec, uint64_t seed, std::string_view name,
                bool integer, uint64_t begin, size_t count, double *out);

} // namespace parcrt

#endif // PARCRT_INIT_H
