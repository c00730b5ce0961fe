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

void Backend::broadcastTo(const TensorRef *) { missing(*this, "broadcast_to"); }
void Backend::sliceGrad(const TensorRef *, const int64_t *, const int64_t *) {
  missing(*this, "slice_grad");
}
void Backend::activationGrad(Activation, const TensorRef *) {
  missing(*this, "activation_grad");
}
void Backend::softmaxGrad(const TensorRef *, int64_t) {
  missing(*this, "softmax_grad");
}
void Backend::layerNormGrad(const TensorRef *, double) {
  missing(*this, "layer_norm_grad");
}
void Backend::rmsNormGrad(const TensorRef *, double) {
  missing(*this, "rms_norm_grad");
}
void Backend::embeddingGrad(const TensorRef *, bool) {
  missing(*this, "embedding_grad");
}
void Backend::attentionGrad(const TensorRef *, bool, double) {
  missing(*this, "attention_grad");
}
void Backend::crossEntropyGrad(const TensorRef *, int64_t) {
  missing(*this, "cross_entropy_grad");
}
void Backend::adamwUpdate(const TensorRef *, double, double, double, double,
                          double) {
  missing(*this, "adamw_update");
}
void Backend::sgdUpdate(const TensorRef *, double, double) {
  missing(*this, "sgd_update");
}
void Backend::clipCoefficient(const TensorRef *, double) {
  missing(*this, "clip_coefficient");
}
