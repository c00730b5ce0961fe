//===- Context.h - what a generated program's calls operate on --*- C++ -*-===//
//
// The launcher creates one context per rank; every parcrt_* call receives
// it and resolves arena offsets against it.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_CONTEXT_H
#define PARCRT_CORE_CONTEXT_H

#include "core/Trace.h"
#include "core/Watchdog.h"
#include "core/Widening.h"
#include "parcrt/Backend.h"

#include <cstdint>

struct parcrt_context {
  parcrt::Backend *backend = nullptr;
  /// The backend's allocation of the program's arena_bytes.
  uint8_t *arena = nullptr;
  parcrt::MeshInfo mesh;
  /// Brackets every collective; may be null (no timeout).
  parcrt::Watchdog *watchdog = nullptr;
  /// Times every call with --trace; null otherwise.
  parcrt::Tracer *tracer = nullptr;
  /// The f32 copies of f16/bf16 tensors (core/Widening.h); shared by the
  /// copies of a context, released before the backend.
  std::shared_ptr<parcrt::WideningScratch> widening;
};

#endif // PARCRT_CORE_CONTEXT_H
