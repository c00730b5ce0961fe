//===- Entry.cpp - the C entry points of generated programs ---------------===//
//
// Each parcrt_* function, defined from the op table (parcrt/Ops.def),
// decodes its static descriptors (parcrt.h) into TensorRefs over the
// context's arena and forwards to the backend.
// Collectives and point-to-point messages go through the backend's
// Communicator, bracketed by the watchdog; gradient and optimizer ops are
// local computations and are not. With --trace every call is timed as one
// event (core/Trace.h).
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "core/Fatal.h"
#include "core/Matrices.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

using namespace parcrt;

namespace {
using Unary = Backend::Unary;
using Comparison = Backend::Comparison;
using Reduce = Backend::Reduce;
using Activation = Backend::Activation;

TensorRef decode(parcrt_context *ctx, const int64_t *words) {
  TensorRef ref;
  ref.data = ctx->arena + words[0];
  ref.dtype = static_cast<parcrt_dtype>(words[1]);
  ref.rank = static_cast<int>(words[2]);
  for (int dim = 0; dim < ref.rank; ++dim)
    ref.shape[dim] = words[3 + dim];
  return ref;
}

/// The first `count` descriptors.
std::vector<TensorRef> decodeAll(parcrt_context *ctx, const int64_t *tensors,
                                 int count) {
  std::vector<TensorRef> refs;
  for (int i = 0; i < count; ++i)
    refs.push_back(decode(ctx, tensors + i * PARCRT_TENSOR_WORDS));
  return refs;
}

/// On cuda a call returns once its work is queued: a traced call starts
/// after all earlier work and ends after its own (pending sends included,
/// watched like the end of a step).
void settle(parcrt_context *ctx) {
  ctx->backend->communicator().synchronize(ctx->watchdog);
  ctx->backend->synchronize();
}

/// Runs `body`, the work of one call. Untraced, a predictable branch is all
/// the tracing costs; traced, the call is recorded as the event `op` of
/// `category`, `describe(event)` adding its arguments.
template <typename Describe, typename Body>
void run(parcrt_context *ctx, const char *op, TraceCategory category,
         Describe &&describe, Body &&body) {
  Tracer *tracer = ctx->tracer;
  if (!tracer) {
    body();
    return;
  }
  TraceEvent event;
  event.name = op;
  event.category = category;
  describe(event);
  if (tracer->synchronizes())
    settle(ctx);
  int64_t start = tracer->now();
  body();
  if (tracer->synchronizes())
    settle(ctx);
  tracer->record(event, start);
}

template <typename Body>
void compute(parcrt_context *ctx, const char *op, Body &&body) {
  auto noArguments = [](TraceEvent &) {};
  run(ctx, op, TraceCategory::Compute, noArguments, body);
}

/// A collective over the group at the start of `ints`, `t` its operand.
template <typename Body>
void collective(parcrt_context *ctx, const char *op, const int64_t *t,
                const int64_t *ints, Body &&body) {
  run(
      ctx, op, TraceCategory::Collective,
      [&](TraceEvent &event) {
        event.bytes = decode(ctx, t).bytes();
        event.numAxes = static_cast<uint8_t>(
            std::min<int64_t>(ints[0], TraceEvent::maxAxes));
        for (int i = 0; i < event.numAxes; ++i)
          event.axes[i] = static_cast<int8_t>(ints[1 + i]);
      },
      body);
}

/// A send or recv of `t` with world rank `peer` on `channel`.
template <typename Body>
void pointToPoint(parcrt_context *ctx, const char *op, const int64_t *t,
                  int peer, int64_t channel, Body &&body) {
  run(
      ctx, op, TraceCategory::PointToPoint,
      [&](TraceEvent &event) {
        event.bytes = decode(ctx, t).bytes();
        event.peer = peer;
        event.channel = channel;
      },
      body);
}

/// The group's axes at the start of `ints` (count, axis positions...).
std::vector<int> groupAxes(const int64_t *ints) {
  return std::vector<int>(ints + 1, ints + 1 + ints[0]);
}

/// The ints after the group at their start.
const int64_t *afterGroup(const int64_t *ints) { return ints + 1 + ints[0]; }

static_assert(static_cast<int>(Activation::Relu) == PARCRT_RELU &&
                  static_cast<int>(Activation::Sigmoid) == PARCRT_SIGMOID &&
                  static_cast<int>(Activation::Silu) == PARCRT_SILU &&
                  static_cast<int>(Activation::Tanh) == PARCRT_TANH &&
                  static_cast<int>(Activation::GeluErf) == PARCRT_GELU_ERF &&
                  static_cast<int>(Activation::GeluTanh) == PARCRT_GELU_TANH,
              "Backend::Activation numbers the kinds as parcrt.h does");
static_assert(static_cast<int>(Comparison::Equal) == PARCRT_EQ &&
                  static_cast<int>(Comparison::NotEqual) == PARCRT_NE &&
                  static_cast<int>(Comparison::Less) == PARCRT_LT &&
                  static_cast<int>(Comparison::LessEqual) == PARCRT_LE &&
                  static_cast<int>(Comparison::Greater) == PARCRT_GT &&
                  static_cast<int>(Comparison::GreaterEqual) == PARCRT_GE,
              "Backend::Comparison numbers the predicates as parcrt.h does");

/// An enum the ABI passes as ints[0], numbered 0 to `last` as parcrt.h does
/// (parcrt_activation, parcrt_comparison).
template <typename Kind>
Kind decodeKind(const char *what, int64_t value, int64_t last) {
  if (value < 0 || value > last)
    fatal(std::string(what) + " " + std::to_string(value) + " (expected 0 to " +
          std::to_string(last) + ")");
  return static_cast<Kind>(value);
}
} // namespace

// Every entry point, from the op table.
extern "C" {

// An op that COMPUTES runs its f16/bf16 tensors through f32 copies
// (core/Widening.h), a GEMM too unless the backend's GEMM takes them; one
// that MOVES takes them as they are.
#define PARCRT_COMPUTE_OP(name, tensors, results, kind, call)                  \
  void parcrt_##name(parcrt_context *ctx, const int64_t *descriptors,          \
                     const int64_t *ints, const double *floats) {              \
    compute(ctx, #name, [&] {                                                  \
      int count = static_cast<int>(tensors);                                   \
      std::vector<TensorRef> refs = decodeAll(ctx, descriptors, count);        \
      auto body = [&](TensorRef *t) { ctx->backend->call; };                   \
      std::string_view kindName = #kind;                                       \
      if (kindName == "MOVES")                                                 \
        body(refs.data());                                                     \
      else if (kindName == "GEMM")                                             \
        runGemm(*ctx->backend, ctx->widening, refs.data(), count, results,     \
                body);                                                         \
      else                                                                     \
        runWidened(*ctx->backend, ctx->widening, refs.data(), count, results,  \
                   body);                                                      \
    });                                                                        \
  }
#define PARCRT_COLLECTIVE_OP(name, call)                                       \
  void parcrt_##name(parcrt_context *ctx, const int64_t *descriptors,          \
                     const int64_t *ints, const double *) {                    \
    collective(ctx, #name, descriptors, ints, [&] {                            \
      std::vector<int> group = groupAxes(ints);                                \
      const int64_t *rest = afterGroup(ints);                                  \
      std::vector<TensorRef> refs = decodeAll(ctx, descriptors, 2);            \
      TensorRef *t = refs.data();                                              \
      Watched watched(ctx->watchdog, #name, group);                            \
      ctx->backend->communicator().call;                                       \
    });                                                                        \
  }
// On cpu a send is buffered and returns at once; on cuda it may wait for
// the peer (creating the pair's communicator).
#define PARCRT_POINT_TO_POINT_OP(name, what, call)                             \
  void parcrt_##name(parcrt_context *ctx, const int64_t *descriptors,          \
                     const int64_t *ints, const double *) {                    \
    int peer = ctx->mesh.peer(ints[1], ints + 2);                              \
    if (peer < 0)                                                              \
      fatal("parcrt_" #name ": its peer's coordinates lie outside the mesh");  \
    pointToPoint(ctx, #name, descriptors, peer, ints[0], [&] {                 \
      TensorRef t[] = {decode(ctx, descriptors)};                              \
      Watched watched(ctx->watchdog, what, peer, ints[0]);                     \
      ctx->backend->communicator().call;                                       \
    });                                                                        \
  }
#include "parcrt/Ops.def"
#undef PARCRT_COMPUTE_OP
#undef PARCRT_COLLECTIVE_OP
#undef PARCRT_POINT_TO_POINT_OP

} // extern "C"
