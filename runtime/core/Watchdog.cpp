//===- Watchdog.cpp - ending a job stuck in communication -----------------===//

#include "core/Watchdog.h"

#include "core/Fatal.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

using namespace parcrt;

namespace {
constexpr int questionTag = 1, answerTag = 2;
/// An answer: what the rank runs, as describe() words it ("" when it is
/// not communicating).
struct Answer {
  char running[160];
};
} // namespace

Watchdog::Watchdog(const MeshInfo &mesh, double timeoutSeconds)
    : mesh(mesh), timeoutSeconds(timeoutSeconds) {
  if (timeoutSeconds <= 0)
    return;
  // Every rank constructs its watchdog at the same point with the same
  // timeout, so the duplication (collective) matches.
  int initialized = 0, level = MPI_THREAD_SINGLE;
  MPI_Initialized(&initialized);
  if (initialized) {
    MPI_Query_thread(&level);
    if (level == MPI_THREAD_MULTIPLE)
      MPI_Comm_dup(MPI_COMM_WORLD, &questions);
  }
  thread = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  if (thread.joinable())
    thread.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (questions != MPI_COMM_NULL && !finalized)
    MPI_Comm_free(&questions);
}

void Watchdog::begin(const char *collective, const std::vector<int> &groupAxes,
                     bool patient) {
  start({collective, groupAxes, -1, 0, patient});
}

void Watchdog::begin(const char *pointToPoint, int peer, int64_t channel) {
  start({pointToPoint, {}, peer, channel});
}

void Watchdog::start(Operation operation) {
  std::lock_guard<std::mutex> lock(mutex);
  running = std::move(operation);
  startTime = std::chrono::steady_clock::now();
}

void Watchdog::end() {
  std::lock_guard<std::mutex> lock(mutex);
  running.kind = nullptr;
}

std::string Watchdog::describe(const Operation &operation) const {
  if (operation.peer >= 0)
    return std::string(operation.kind) + " rank " +
           std::to_string(operation.peer) + " (channel " +
           std::to_string(operation.channel) + ")";
  std::string names;
  for (int axis : operation.axes)
    names += (names.empty() ? "" : ", ") + mesh.axisNames[axis];
  return std::string("collective ") + operation.kind + " over [" + names + "]";
}

void Watchdog::answerQuestions() {
  if (questions == MPI_COMM_NULL)
    return;
  for (;;) {
    int pending = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, questionTag, questions, &pending, &status);
    if (!pending)
      return;
    int question = 0;
    MPI_Recv(&question, 1, MPI_INT, status.MPI_SOURCE, questionTag, questions,
             MPI_STATUS_IGNORE);
    Answer answer = {};
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (running.kind)
        std::snprintf(answer.running, sizeof(answer.running), "%s",
                      describe(running).c_str());
    }
    MPI_Send(&answer, sizeof(answer), MPI_BYTE, status.MPI_SOURCE, answerTag,
             questions);
  }
}

std::string Watchdog::askPeers(const Operation &stuck, bool &allAnswered) {
  allAnswered = false;
  if (questions == MPI_COMM_NULL)
    return "another rank may have failed";
  std::vector<int> peers =
      stuck.peer >= 0 ? std::vector<int>{stuck.peer} : mesh.group(stuck.axes);
  peers.erase(std::remove(peers.begin(), peers.end(), mesh.rank), peers.end());
  std::vector<Answer> answers(peers.size());
  std::vector<MPI_Request> requests(2 * peers.size());
  int question = 0;
  for (size_t i = 0; i < peers.size(); ++i) {
    MPI_Isend(&question, 1, MPI_INT, peers[i], questionTag, questions,
              &requests[2 * i]);
    MPI_Irecv(&answers[i], sizeof(Answer), MPI_BYTE, peers[i], answerTag,
              questions, &requests[2 * i + 1]);
  }
  // The peers' watchdogs look for questions several times a second, while
  // this one keeps answering theirs (they may be asking too).
  std::vector<bool> answered(peers.size(), false);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < deadline &&
         std::count(answered.begin(), answered.end(), true) <
             static_cast<long>(peers.size())) {
    for (size_t i = 0; i < peers.size(); ++i) {
      int done = 0;
      if (!answered[i])
        MPI_Test(&requests[2 * i + 1], &done, MPI_STATUS_IGNORE);
      answered[i] = answered[i] || done;
    }
    answerQuestions();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  allAnswered = std::count(answered.begin(), answered.end(), true) ==
                static_cast<long>(peers.size());
  std::string what = describe(stuck), silent, elsewhere;
  for (size_t i = 0; i < peers.size(); ++i) {
    std::string rank = "rank " + std::to_string(peers[i]);
    if (!answered[i])
      silent += (silent.empty() ? "" : ", ") + rank;
    else if (what != answers[i].running)
      elsewhere +=
          std::string(elsewhere.empty() ? "" : "; ") + rank +
          (answers[i].running[0] ? std::string(" is in ") + answers[i].running
                                 : " is not communicating: computing, or stuck "
                                   "elsewhere");
  }
  std::string sentence;
  if (!silent.empty())
    sentence = silent + (silent.find(',') == std::string::npos
                             ? " does not answer: stopped or gone"
                             : " do not answer: stopped or gone");
  if (!elsewhere.empty())
    sentence += (sentence.empty() ? "" : "; ") + elsewhere;
  return sentence.empty() ? "every rank of it is waiting in it too" : sentence;
}

void Watchdog::watch() {
  std::chrono::duration<double> timeout(timeoutSeconds);
  // Checking a few times per timeout keeps the overshoot small without
  // waking often on long timeouts.
  auto period = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::min(std::chrono::duration<double>(0.1), timeout / 4));
  std::unique_lock<std::mutex> lock(mutex);
  while (!stopping) {
    wake.wait_for(lock, period);
    if (stopping)
      break;
    // MPI calls happen without the lock: the main thread takes it around
    // every watched operation.
    lock.unlock();
    answerQuestions();
    lock.lock();
    if (!running.kind || std::chrono::steady_clock::now() - startTime < timeout)
      continue;
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeoutSeconds);
    Operation stuck = running;
    auto stuckSince = startTime;
    lock.unlock();
    bool allAnswered = false;
    std::string what = describe(stuck), peers = askPeers(stuck, allAnswered);
    if (stuck.patient && allAnswered) {
      // Every rank is alive (loading, say): wait another timeout.
      lock.lock();
      if (running.kind == stuck.kind && startTime == stuckSince)
        startTime = std::chrono::steady_clock::now();
      continue;
    }
    fatal(what + " did not complete in " + seconds + " s (" + peers + ")");
  }
}
