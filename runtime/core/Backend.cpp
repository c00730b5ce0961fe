//===- Backend.cpp - what every backend shares ----------------------------===//

#include "parcrt/Backend.h"

#include "core/Fatal.h"

using namespace parcrt;

const char *parcrt::dtypeName(parcrt_dtype dtype) {
  switch (dtype) {
  case PARCRT_F32:
    return "f32";
  case PARCRT_F16:
    return "f16";
  case PARCRT_BF16:
    return "bf16";
  case PARCRT_I32:
    return "i32";
  case PARCRT_I64:
    return "i64";
  }
  return "an unknown dtype";
}

size_t parcrt::dtypeBytes(parcrt_dtype dtype) {
  switch (dtype) {
  case PARCRT_F32:
  case PARCRT_I32:
    return 4;
  case PARCRT_F16:
  case PARCRT_BF16:
    return 2;
  case PARCRT_I64:
    return 8;
  }
  return 0;
}

int64_t TensorRef::numElements() const {
  int64_t count = 1;
  for (int dim = 0; dim < rank; ++dim)
    count *= shape[dim];
  return count;
}

Communicator::~Communicator() = default;
Backend::~Backend() = default;

// Defaults for the gradient and optimizer entry points: a backend without
// them says which one it lacks instead of computing something wrong.
static void missing(const Backend &backend, const char *op) {
  fatal(std::string("the ") + backend.name() + " backend has no " + op);
}

#define PARCRT_BACKEND_OP(method, parameters, arguments)
#define PARCRT_BACKEND_OPTIONAL_OP(method, parameters, arguments, op)          \
  void Backend::method parameters { missing(*this, op); }
#include "parcrt/BackendOps.def"
