//===- Options.h - the flags of a compiled program ------------*- C++ -*-===//
//
// MPI-free, so that the flag parser is unit-tested and fuzzed on its own.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_OPTIONS_H
#define PARCRT_MAIN_OPTIONS_H

#include <cstdint>
#include <string>

namespace parcrt {

/// The usage text, a printf format taking the program's name.
extern const char *const usage;

struct Options {
  int64_t steps = 1;
  std::string weights, inputs, out, trace, checkpoint;
  /// Steps between checkpoints; 0 = none.
  int64_t checkpointEvery = 0;
  /// Continue from the step recorded in --weights.
  bool resume = false;
  uint64_t seed = 0;
  std::string backend = "cpu";
  double timeout = 30;
  /// Threads of the cpu kernels; 0 = defaultThreads.
  int threads = 0;
  bool allowNonfinite = false;
  bool help = false;
};

/// The tracer numbers steps with int32.
constexpr uint64_t maxSteps = (uint64_t(1) << 31) - 1;
constexpr uint64_t maxThreads = 4096;

/// The cpu kernels' threads without --threads: OMP_NUM_THREADS where it is
/// a number from 1 to maxThreads, else this node's cores shared among its
/// `ranksOnNode` ranks (at least 1).
int defaultThreads(int ranksOnNode);

/// A decimal number without sign; false on anything else or overflow.
bool parseUnsigned(const std::string &text, uint64_t &value);

/// Accepts `--flag value` and `--flag=value`; false with `error` set on an
/// unknown flag, a missing or bad value or flags that contradict each other.
bool parseOptions(int argc, char **argv, Options &options, std::string *error);

} // namespace parcrt

#endif // PARCRT_MAIN_OPTIONS_H
