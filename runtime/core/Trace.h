//===- Trace.h - timing every runtime call for --trace ----------*- C++ -*-===//
//
// With --trace, each rank records one event per parcrt_* call and one per
// step, then formats them as Chrome trace events (the "traceEvents" JSON
// that chrome://tracing and ui.perfetto.dev load). A GPT step makes a few
// thousand calls, so an event is a small fixed record whose name points at
// a static string; nothing is formatted until the steps are over.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_TRACE_H
#define PARCRT_CORE_TRACE_H

#include "parcrt/Backend.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace parcrt {

enum class TraceCategory : uint8_t { Compute, Collective, PointToPoint, Step };

struct TraceEvent {
  static constexpr int maxAxes = 8;

  /// A string literal: the op ("matmul", "all_reduce", "send") or "step".
  const char *name = nullptr;
  TraceCategory category = TraceCategory::Compute;
  /// Collectives: the group's mesh axes, the first maxAxes of them (copied,
  /// not pointed at, so that no attribute array has to outlive the call).
  uint8_t numAxes = 0;
  int8_t axes[maxAxes] = {};
  /// The step (from 1) the event belongs to.
  int32_t step = 0;
  /// Point-to-point: the peer's world rank.
  int32_t peer = -1;
  /// Point-to-point: the channel.
  int64_t channel = 0;
  /// Collectives and point-to-point: the bytes of the operand (sent,
  /// received).
  int64_t bytes = 0;
  /// Nanoseconds since the origin (Tracer::start).
  int64_t start = 0, duration = 0;
};

class Tracer {
public:
  /// `steps` sizes the event buffer after the first step (every step makes
  /// the same calls). With `synchronize`, calls are timed from and to an
  /// idle backend: on cuda a call returns once its work is queued.
  Tracer(int64_t steps, bool synchronize);

  bool synchronizes() const { return synchronize; }
  /// Makes now() 0. Main calls it right after a barrier so that all ranks
  /// share the origin up to the barrier's skew.
  void start() { origin = std::chrono::steady_clock::now(); }
  /// Nanoseconds since start().
  int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - origin)
        .count();
  }

  void beginStep(int32_t step);
  void endStep();
  /// Records `event` of the current step as running from `start` to now.
  void record(TraceEvent event, int64_t start);

  /// This rank's events and its "process_name" metadata as comma-separated
  /// JSON objects (no brackets), pid `mesh.rank`, tid 0, times in µs.
  std::string format(const MeshInfo &mesh,
                     const std::string &processName) const;

private:
  int64_t steps;
  bool synchronize;
  std::chrono::steady_clock::time_point origin;
  int32_t step = 0;
  int64_t stepStart = 0;
  std::vector<TraceEvent> events;
};

} // namespace parcrt

#endif // PARCRT_CORE_TRACE_H
