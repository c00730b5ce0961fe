//===- TraceFile.h - the job's --trace file, written by rank 0 --*- C++ -*-===//
//
// Every rank formats its own events (core/Trace.h); rank 0 gathers them and
// writes one Chrome trace. The file is created as PATH.tmp before the steps,
// so that an unwritable path fails before any work, and renamed to PATH
// once complete, so that a reader never sees half a trace.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_TRACEFILE_H
#define PARCRT_MAIN_TRACEFILE_H

#include <cstdio>
#include <string>

namespace parcrt {

class TraceFile {
public:
  TraceFile() = default;
  /// Removes PATH.tmp if write() did not complete it.
  ~TraceFile();
  TraceFile(const TraceFile &) = delete;
  TraceFile &operator=(const TraceFile &) = delete;

  /// On rank 0 creates PATH.tmp; false with `error` set when it cannot.
  /// Other ranks only remember that they trace.
  bool create(const std::string &path, int rank, std::string *error);

  /// Collective over MPI_COMM_WORLD: every rank passes its formatted events
  /// (Tracer::format), rank 0 writes them in rank order and renames the
  /// file to PATH. False with `error` set (on rank 0, or on every rank when
  /// the events are too many for one MPI message).
  bool write(const std::string &events, std::string *error);

private:
  std::string path, temporary;
  int rank = 0;
  std::FILE *file = nullptr;
};

} // namespace parcrt

#endif // PARCRT_MAIN_TRACEFILE_H
