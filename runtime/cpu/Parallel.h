//===- Parallel.h - the cpu kernels' threads --------------------*- C++ -*-===//
//
// The cpu backend runs each kernel on one team of OpenMP threads: oneDNN's
// GEMMs and primitives (Debian's oneDNN is built on OpenMP) and the loops
// of parc's own kernels through parallelFor. One team, not two: OpenBLAS's
// pthreads spinning beside OpenMP's made a 2-thread GEMM slower than one.
// parc's kernels split their work so that each result element is computed
// by one thread in the serial loop's order; oneDNN's GEMMs may split their
// depth among threads, so results can differ by f32 rounding between
// thread counts.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_PARALLEL_H
#define PARCRT_CPU_PARALLEL_H

#include <algorithm>
#include <cstdint>

namespace parcrt::cpu {

/// The fewest elements of a cheap elementwise loop worth a thread of their
/// own: below it, starting the team costs more than it saves.
constexpr int64_t elementGrain = 1 << 14;

/// The fewest rows of `length` elements worth a thread: about elementGrain
/// elements, at least one row (also when rows are empty).
constexpr int64_t rowGrain(int64_t length) {
  return length > 0 ? std::max<int64_t>(1, elementGrain / length) : 1;
}

/// Sets the threads of the kernels (at least 1).
void setThreads(int threads);
/// The threads a kernel may use.
int threads();

/// Calls `body(begin, end)` on disjoint ranges that cover [0, count), each
/// at least `grain` long (but the last), on up to threads() threads at once.
template <typename Body>
void parallelFor(int64_t count, int64_t grain, Body &&body) {
  int64_t chunks =
      std::min<int64_t>(threads(), count / std::max<int64_t>(grain, 1));
  if (chunks <= 1) {
    if (count > 0)
      body(int64_t(0), count);
    return;
  }
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int64_t chunk = 0; chunk < chunks; ++chunk)
    body(count * chunk / chunks, count * (chunk + 1) / chunks);
}

} // namespace parcrt::cpu

#endif // PARCRT_CPU_PARALLEL_H
