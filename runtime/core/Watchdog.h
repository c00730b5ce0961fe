//===- Watchdog.h - ending a job stuck in a collective ----------*- C++ -*-===//
//
// When one rank dies or diverges, the others wait in their next collective
// forever. Every collective is bracketed by begin()/end(); a background
// thread aborts the job when one has been running longer than the timeout,
// naming the collective so the user knows where the ranks parted.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_WATCHDOG_H
#define PARCRT_CORE_WATCHDOG_H

#include "parcrt/Backend.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace parcrt {

class Watchdog {
public:
  /// `mesh` names the axes in messages and must outlive the watchdog. A
  /// timeout of 0 or less disables it (no thread is started).
  Watchdog(const MeshInfo &mesh, double timeoutSeconds);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// `kind` is a string literal such as "all_reduce".
  void begin(const char *kind, const std::vector<int> &axes);
  void end();

private:
  void watch();

  const MeshInfo &mesh;
  double timeoutSeconds;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  /// The running collective; `kind` is null when none is.
  const char *kind = nullptr;
  std::vector<int> axes;
  std::chrono::steady_clock::time_point start;
  std::thread thread;
};

} // namespace parcrt

#endif // PARCRT_CORE_WATCHDOG_H
