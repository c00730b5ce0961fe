//===- Trace.cpp - timing every runtime call for --trace ------------------===//

#include "core/Trace.h"

#include <cinttypes>
#include <cstdio>

using namespace parcrt;

namespace {
/// Reserved before the first step, when the number of calls per step is not
/// known yet: 64 bytes each, 4 MiB.
constexpr size_t initialEvents = size_t(1) << 16;

const char *categoryName(TraceCategory category) {
  switch (category) {
  case TraceCategory::Compute:
    return "compute";
  case TraceCategory::Collective:
    return "collective";
  case TraceCategory::PointToPoint:
    return "p2p";
  case TraceCategory::Step:
    return "step";
  }
  return "unknown";
}

/// `text` as a JSON string literal.
std::string quoted(const std::string &text) {
  std::string json = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      json += '\\';
    json += c;
  }
  return json + "\"";
}

/// Nanoseconds as microseconds with three decimals, as Chrome traces count
/// them. Every event starts after the origin.
std::string microseconds(int64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%" PRId64 ".%03" PRId64,
                nanoseconds / 1000, nanoseconds % 1000);
  return text;
}

std::string arguments(const TraceEvent &event, const MeshInfo &mesh) {
  std::string json = "{\"step\":" + std::to_string(event.step);
  switch (event.category) {
  case TraceCategory::Compute:
  case TraceCategory::Step:
    break;
  case TraceCategory::Collective: {
    json += ",\"bytes\":" + std::to_string(event.bytes) + ",\"axes\":[";
    for (int i = 0; i < event.numAxes; ++i)
      json += (i ? "," : "") + quoted(mesh.axisNames[event.axes[i]]);
    json += "]";
    break;
  }
  case TraceCategory::PointToPoint:
    json += ",\"bytes\":" + std::to_string(event.bytes) +
            ",\"peer\":" + std::to_string(event.peer) +
            ",\"channel\":" + std::to_string(event.channel);
    break;
  }
  return json + "}";
}
} // namespace

Tracer::Tracer(int64_t steps, bool synchronize)
    : steps(steps), synchronize(synchronize) {
  events.reserve(initialEvents);
}

void Tracer::beginStep(int32_t number) {
  step = number;
  stepStart = now();
}

void Tracer::endStep() {
  TraceEvent event;
  event.name = "step";
  event.category = TraceCategory::Step;
  record(event, stepStart);
  // Later steps make the same calls: no reallocation while they run.
  if (step == 1)
    events.reserve(events.size() * steps);
}

void Tracer::record(TraceEvent event, int64_t start) {
  event.step = step;
  event.start = start;
  event.duration = now() - start;
  events.push_back(event);
}

std::string Tracer::format(const MeshInfo &mesh,
                           const std::string &processName) const {
  std::string pid = std::to_string(mesh.rank);
  std::string json = "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid +
                     ",\"tid\":0,\"args\":{\"name\":" + quoted(processName) +
                     "}},\n{\"name\":\"process_sort_index\",\"ph\":\"M\","
                     "\"pid\":" +
                     pid + ",\"tid\":0,\"args\":{\"sort_index\":" + pid + "}}";
  for (const TraceEvent &event : events) {
    std::string name = event.name;
    if (event.category == TraceCategory::Step)
      name += " " + std::to_string(event.step);
    json += ",\n{\"name\":" + quoted(name) + ",\"cat\":\"" +
            categoryName(event.category) +
            "\",\"ph\":\"X\",\"ts\":" + microseconds(event.start) +
            ",\"dur\":" + microseconds(event.duration) + ",\"pid\":" + pid +
            ",\"tid\":0,\"args\":" + arguments(event, mesh) + "}";
  }
  return json;
}
