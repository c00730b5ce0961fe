//===- CpuBackend.cpp - the cpu backend: oneDNN and own kernels, MPI ------===//

#include "cpu/Blocks.h"
#include "cpu/Kernels.h"
#include "cpu/MpiCommunicator.h"
#include "cpu/Parallel.h"

#include <cstdlib>
#include <cstring>

using namespace parcrt;

namespace {
class CpuBackend final : public Backend {
public:
  CpuBackend(const MeshInfo &mesh, int threads) : mesh(mesh), comms(mesh) {
    cpu::setThreads(threads);
  }

  const char *name() const override { return "cpu"; }

  void *allocate(size_t bytes) override {
    // Cache-line aligned and zeroed, so an unwritten byte reads as 0 on
    // every rank.
    size_t rounded = (bytes + 63) / 64 * 64;
    void *memory = std::aligned_alloc(64, rounded ? rounded : 64);
    if (memory)
      std::memset(memory, 0, rounded);
    return memory;
  }
  void release(void *memory) override { std::free(memory); }
  void toArena(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void fromArena(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void synchronize() override { comms.synchronize(nullptr); }
  Communicator &communicator() override { return comms; }

#define PARCRT_BACKEND_OP(method, parameters, arguments)                       \
  void method parameters override { cpu::method arguments; }
#include "parcrt/BackendOps.def"

  /// This rank's chunk along `dim`: local, no communication.
  void allSlice(const std::vector<int> &axes, int64_t dim,
                const TensorRef *t) override {
    int64_t length = t[1].shape[dim];
    cpu::copyAlongDim(t[0].data, t[0].shape[dim],
                      mesh.indexInGroup(axes) * length, t[1].data, length, 0,
                      length, cpu::outerCount(t[0], dim),
                      cpu::innerBytes(t[0], dim));
  }
  void axisIndex(const std::vector<int> &axes,
                 const TensorRef &result) override {
    cpu::requireInteger("axis_index", "the result", result);
    int64_t index = mesh.indexInGroup(axes);
    if (result.dtype == PARCRT_I32)
      *static_cast<int32_t *>(result.data) = static_cast<int32_t>(index);
    else
      *static_cast<int64_t *>(result.data) = index;
  }

private:
  const MeshInfo &mesh;
  cpu::MpiCommunicator comms;
};
} // namespace

std::unique_ptr<Backend> parcrt::createCpuBackend(const MeshInfo &mesh,
                                                  int threads) {
  return std::make_unique<CpuBackend>(mesh, threads);
}
