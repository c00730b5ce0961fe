//===- HostDevice.h - code that both backends compile -----------*- C++ -*-===//
//
// PARCRT_HOST_DEVICE marks a function the cpu backend's C++ and the cuda
// backend's kernels both call: __host__ __device__ under nvcc, nothing
// under the C++ compiler.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_HOSTDEVICE_H
#define PARCRT_CORE_HOSTDEVICE_H

#ifdef __CUDACC__
#define PARCRT_HOST_DEVICE __host__ __device__
#else
#define PARCRT_HOST_DEVICE
#endif

#endif // PARCRT_CORE_HOSTDEVICE_H
