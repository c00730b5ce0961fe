//===- Watchdog.cpp - ending a job stuck in communication -----------------===//

#include "core/Watchdog.h"

#include "core/Fatal.h"

#include <cstdio>

using namespace parcrt;

Watchdog::Watchdog(const MeshInfo &mesh, double timeoutSeconds)
    : mesh(mesh), timeoutSeconds(timeoutSeconds) {
  if (timeoutSeconds > 0)
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
}

void Watchdog::begin(const char *collective,
                     const std::vector<int> &groupAxes) {
  start({collective, groupAxes});
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

std::string Watchdog::describe() const {
  if (running.peer >= 0)
    return std::string(running.kind) + " rank " + std::to_string(running.peer) +
           " (channel " + std::to_string(running.channel) + ")";
  std::string names;
  for (int axis : running.axes)
    names += (names.empty() ? "" : ", ") + mesh.axisNames[axis];
  return std::string("collective ") + running.kind + " over [" + names + "]";
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
    if (stopping || !running.kind ||
        std::chrono::steady_clock::now() - startTime < timeout)
      continue;
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeoutSeconds);
    fatal(describe() + " did not complete in " + seconds +
          " s (another rank may have failed)");
  }
}
