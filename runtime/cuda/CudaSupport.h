//===- CudaSupport.h - errors, sizes and scratch memory ---------*- C++ -*-===//
//
// Small helpers shared by the cuda backend's translation units. Backend
// methods have no error channel, and the build uses -fno-exceptions: a
// failing CUDA, cuBLAS or NCCL call is fatal (core/Fatal.h: message on
// stderr, then MPI_Abort so that no rank waits forever).
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CUDA_CUDASUPPORT_H
#define PARCRT_CUDA_CUDASUPPORT_H

#include "parcrt/Backend.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace parcrt::cuda {

/// parcrt::fatal("cuda backend: " + printf-formatted message).
[[noreturn]] void fatal(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// fatal() unless `status` is cudaSuccess; `what` names the failing step.
void check(cudaError_t status, const char *what);

/// The size of one element of `dtype`.
/// Device memory for temporaries (collective packing, per-row losses).
/// Work queued on one stream reuses it in stream order; growing it waits
/// for the device first.
class Scratch {
public:
  Scratch() = default;
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch();

  /// At least `bytes` of device memory, valid until the next call.
  void *get(size_t bytes);

private:
  void *data = nullptr;
  size_t capacity = 0;
};

} // namespace parcrt::cuda

#endif // PARCRT_CUDA_CUDASUPPORT_H
