//===- Init.cpp - Deterministic counter-based initialization --------------===//

#include "parcrt/Init.h"

#include <cmath>

using namespace parcrt;

namespace {
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;
constexpr uint64_t kFnvOffset = 0xCBF29CE484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001B3ull;
// 2^-53: turns the top 53 bits of a draw into a double without rounding.
constexpr double kInv2Pow53 = 1.0 / 9007199254740992.0;
// The double nearest to 2*pi (Python's math.tau).
constexpr double kTwoPi = 6.283185307179586;

/// The splitmix64 output finalizer (Steele, Lea, Flood 2014).
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) from the top 53 bits.
double unitClosedOpen(uint64_t bits) {
  return static_cast<double>(bits >> 11) * kInv2Pow53;
}

/// Uniform in (0, 1], so that log() below is finite.
double unitOpenClosed(uint64_t bits) {
  return static_cast<double>((bits >> 11) + 1) * kInv2Pow53;
}
} // namespace

uint64_t parcrt::tensorKey(uint64_t seed, std::string_view name) {
  uint64_t hash = kFnvOffset;
  for (char c : name) {
    hash ^= static_cast<uint8_t>(c);
    hash *= kFnvPrime;
  }
  return mix64(hash ^ mix64(seed + kGolden));
}

uint64_t parcrt::counterBits(uint64_t key, uint64_t counter) {
  return mix64(key + counter * kGolden);
}

double parcrt::initValue(const InitSpec &spec, uint64_t key,
                         uint64_t globalIndex, bool integer) {
  double value = spec.first;
  switch (spec.distribution) {
  case InitDistribution::Normal: {
    // Box-Muller; only the cosine branch is used so that element i depends
    // on its own two draws and nothing else.
    double u1 = unitOpenClosed(counterBits(key, 2 * globalIndex));
    double u2 = unitClosedOpen(counterBits(key, 2 * globalIndex + 1));
    double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
    value = spec.first + spec.second * z;
    break;
  }
  case InitDistribution::Uniform: {
    double u = unitClosedOpen(counterBits(key, globalIndex));
    value = spec.first + (spec.second - spec.first) * u;
    break;
  }
  case InitDistribution::Constant:
    break;
  }
  if (!integer)
    return value;
  value = std::floor(value);
  // (high - low) * u may round up to high - low; keep ids below high.
  if (spec.distribution == InitDistribution::Uniform &&
      value > spec.second - 1.0)
    value = spec.second - 1.0;
  return value;
}

void parcrt::initValues(const InitSpec &spec, uint64_t seed,
                        std::string_view name, bool integer, uint64_t begin,
                        size_t count, double *out) {
  uint64_t key = tensorKey(seed, name);
  for (size_t i = 0; i < count; ++i)
    out[i] = initValue(spec, key, begin + i, integer);
}
