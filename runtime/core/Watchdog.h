//===- Watchdog.h - ending a job stuck in communication ---------*- C++ -*-===//
//
// When one rank dies or diverges, the others wait in their next collective
// or receive forever. Every such wait is bracketed by begin()/end(); a
// background thread aborts the job when one has been running longer than
// the timeout, naming the operation so the user knows where the ranks
// parted. Before it aborts it asks the other ranks of the operation what
// they are doing, over a communicator of the watchdogs' own that every
// rank's thread answers, so the message names the rank that is stopped or
// elsewhere.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_WATCHDOG_H
#define PARCRT_CORE_WATCHDOG_H

#include "parcrt/Backend.h"

#include <mpi.h>

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
  /// such as "all_reduce". A patient one (the set-up's, which waits for
  /// ranks that are still loading) times out only when a rank of the group
  /// does not answer: one that answers is busy, not stopped.
  void begin(const char *kind, const std::vector<int> &axes,
             bool patient = false);
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
    bool patient = false;
  };

  void start(Operation operation);
  std::string describe(const Operation &operation) const;
  void watch();
  /// Replies to the other watchdogs' questions with what this rank runs.
  void answerQuestions();
  /// What the ranks `stuck` waits for answer, as a sentence to append; a
  /// rank that does not answer within a second is stopped or gone.
  /// `allAnswered` tells whether every one answered.
  std::string askPeers(const Operation &stuck, bool &allAnswered);

  const MeshInfo &mesh;
  double timeoutSeconds;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  Operation running;
  std::chrono::steady_clock::time_point startTime;
  /// The watchdogs' own communicator (a duplicate of the world's); null
  /// when MPI cannot serve a second thread.
  MPI_Comm questions = MPI_COMM_NULL;
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
