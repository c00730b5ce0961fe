//===- PlanFilesFuzzer.cpp - libFuzzer target for plan.json and cluster.json =//
//
// Every input is read as a plan and as a cluster: a reader may only accept
// it or return a located error. What it accepts must write out and read back
// to the same text (the writers are deterministic).
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Cluster.h"
#include "parc/Plan/Plan.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir::parc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (llvm::Expected<Plan> plan = readPlan(text, "fuzz.json")) {
    std::string written = writePlan(*plan);
    llvm::Expected<Plan> again = readPlan(written, "written.json");
    if (!again || writePlan(*again) != written)
      std::abort();
  } else {
    llvm::consumeError(plan.takeError());
  }
  if (llvm::Expected<ClusterSpec> cluster = readCluster(text, "fuzz.json")) {
    std::string written = writeCluster(*cluster);
    llvm::Expected<ClusterSpec> again = readCluster(written, "written.json");
    if (!again || writeCluster(*again) != written)
      std::abort();
  } else {
    llvm::consumeError(cluster.takeError());
  }
  return 0;
}
