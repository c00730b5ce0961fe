//===- NoCuda.cpp - createCudaBackend where CUDA is not built in ----------===//
//
// Compiled only without PARCRT_HAVE_CUDA; runtime/cuda/ defines the real one.
//
//===----------------------------------------------------------------------===//

#include "parcrt/Backend.h"

std::unique_ptr<parcrt::Backend>
parcrt::createCudaBackend(const MeshInfo &, int, std::string *error) {
  if (error)
    *error = "libparcrt was built without CUDA";
  return nullptr;
}
