//===- Watchdog.cpp - ending a job stuck in a collective ------------------===//

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
  std::lock_guard<std::mutex> lock(mutex);
  kind = collective;
  axes = groupAxes;
  start = std::chrono::steady_clock::now();
}

void Watchdog::end() {
  std::lock_guard<std::mutex> lock(mutex);
  kind = nullptr;
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
    if (stopping || !kind || std::chrono::steady_clock::now() - start < timeout)
      continue;
    std::string names;
    for (int axis : axes)
      names += (names.empty() ? "" : ", ") + mesh.axisNames[axis];
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", timeoutSeconds);
    fatal(std::string("collective ") + kind + " over [" + names +
          "] did not complete in " + seconds +
          " s (another rank may have failed)");
  }
}
