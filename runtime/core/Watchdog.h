//===- Watchdog.h - ending a job stuck in communication ---------*- C++ -*-===//
//
// When one rank dies or diverges, the others wait in their next collective
// or receive forever. Every such wait is bracketed by begin()/end(); a
// background thread aborts the job when one has been running longer than
// the timeout, naming the operation so the user knows where the ranks
// parted.
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

  /// A collective over the mesh axes `axes`; `kind` is a string literal
  /// such as "all_reduce".
  void begin(const char *kind, const std::vector<int> &axes);
  /// Point-to-point with world rank `peer` on `channel`; `kind` is the
  /// string literal "send to" or "recv from".
  void begin(const char *kind, int peer, int64_t channel);
  void end();

private:
  /// What is running; formatted only when it times out.
  struct Operation {
    const char *kind = nullptr; // null when nothing runs
    std::vector<int> axes;
    int peer = -1; // a collective when negative
    int64_t channel = 0;
  };

  void start(Operation operation);
  std::string describe() const;
  void watch();

  const MeshInfo &mesh;
  double timeoutSeconds;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  Operation running;
  std::chrono::steady_clock::time_point startTime;
  std::thread thread;
};

/// Brackets a scope with `watchdog`'s begin() and end(); a null watchdog
/// watches nothing.
class Watched {
public:
  template <typename... Operation>
  explicit Watched(Watchdog *watchdog, const Operation &...operation)
      : watchdog(watchdog) {
    if (watchdog)
      watchdog->begin(operation...);
  }
  ~Watched() {
    if (watchdog)
      watchdog->end();
  }
  Watched(const Watched &) = delete;
  Watched &operator=(const Watched &) = delete;

private:
  Watchdog *watchdog;
};

} // namespace parcrt

#endif // PARCRT_CORE_WATCHDOG_H
