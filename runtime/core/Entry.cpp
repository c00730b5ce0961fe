//===- Entry.cpp - the C entry points of generated programs ---------------===//
//
// Each parcrt_* function decodes its static descriptors (parcrt.h) into
// TensorRefs over the context's arena and forwards to the backend.
// Collectives and point-to-point messages go through the backend's
// Communicator, bracketed by the watchdog; gradient and optimizer ops are
// local computations and are not. With --trace every call is timed as one
// event (core/Trace.h).
//
//===----------------------------------------------------------------------===//

#include "core/Context.h"
#include "core/Fatal.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

using namespace parcrt;

namespace {
using Unary = Backend::Unary;
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

/// A group (count, axis positions...) at the start of `ints`; advances
/// `ints` past it.
std::vector<int> decodeGroup(const int64_t *&ints) {
  std::vector<int> axes(ints + 1, ints + 1 + ints[0]);
  ints += 1 + ints[0];
  return axes;
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

void binary(parcrt_context *ctx, char op, const int64_t *tensors) {
  ctx->backend->binary(op, decodeAll(ctx, tensors, 3).data());
}

void unary(parcrt_context *ctx, Unary op, const int64_t *tensors) {
  ctx->backend->unary(op, decodeAll(ctx, tensors, 2).data());
}

void reduce(parcrt_context *ctx, Reduce op, const int64_t *tensors,
            const int64_t *ints) {
  // keepdims (after the axes) shows in the result's shape already.
  ctx->backend->reduce(op, decodeAll(ctx, tensors, 2).data(), ints + 1,
                       static_cast<int>(ints[0]));
}
} // namespace

extern "C" {

void parcrt_add(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "add", [&] { binary(ctx, '+', t); });
}
void parcrt_sub(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "sub", [&] { binary(ctx, '-', t); });
}
void parcrt_mul(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "mul", [&] { binary(ctx, '*', t); });
}
void parcrt_div(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "div", [&] { binary(ctx, '/', t); });
}
void parcrt_pow(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "pow", [&] { binary(ctx, '^', t); });
}
void parcrt_select(parcrt_context *ctx, const int64_t *t, const int64_t *,
                   const double *) {
  compute(ctx, "select",
          [&] { ctx->backend->select(decodeAll(ctx, t, 4).data()); });
}

void parcrt_neg(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "neg", [&] { unary(ctx, Unary::Neg, t); });
}
void parcrt_exp(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "exp", [&] { unary(ctx, Unary::Exp, t); });
}
void parcrt_log(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "log", [&] { unary(ctx, Unary::Log, t); });
}
void parcrt_tanh(parcrt_context *ctx, const int64_t *t, const int64_t *,
                 const double *) {
  compute(ctx, "tanh", [&] { unary(ctx, Unary::Tanh, t); });
}
void parcrt_relu(parcrt_context *ctx, const int64_t *t, const int64_t *,
                 const double *) {
  compute(ctx, "relu", [&] { unary(ctx, Unary::Relu, t); });
}
void parcrt_sigmoid(parcrt_context *ctx, const int64_t *t, const int64_t *,
                    const double *) {
  compute(ctx, "sigmoid", [&] { unary(ctx, Unary::Sigmoid, t); });
}
void parcrt_silu(parcrt_context *ctx, const int64_t *t, const int64_t *,
                 const double *) {
  compute(ctx, "silu", [&] { unary(ctx, Unary::Silu, t); });
}
void parcrt_cast(parcrt_context *ctx, const int64_t *t, const int64_t *,
                 const double *) {
  compute(ctx, "cast",
          [&] { ctx->backend->cast(decodeAll(ctx, t, 2).data()); });
}
void parcrt_sqrt(parcrt_context *ctx, const int64_t *t, const int64_t *,
                 const double *) {
  compute(ctx, "sqrt", [&] { unary(ctx, Unary::Sqrt, t); });
}
void parcrt_erf(parcrt_context *ctx, const int64_t *t, const int64_t *,
                const double *) {
  compute(ctx, "erf", [&] { unary(ctx, Unary::Erf, t); });
}
void parcrt_gelu(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                 const double *) {
  compute(ctx, "gelu",
          [&] { unary(ctx, ints[0] ? Unary::GeluTanh : Unary::GeluErf, t); });
}

void parcrt_matmul(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                   const double *) {
  compute(ctx, "matmul", [&] {
    ctx->backend->matmul(decodeAll(ctx, t, 3).data(), ints[0] != 0,
                         ints[1] != 0);
  });
}

void parcrt_softmax(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                    const double *) {
  compute(ctx, "softmax",
          [&] { ctx->backend->softmax(decodeAll(ctx, t, 2).data(), ints[0]); });
}
void parcrt_layer_norm(parcrt_context *ctx, const int64_t *t, const int64_t *,
                       const double *floats) {
  compute(ctx, "layer_norm", [&] {
    ctx->backend->layerNorm(decodeAll(ctx, t, 4).data(), floats[0]);
  });
}
void parcrt_rms_norm(parcrt_context *ctx, const int64_t *t, const int64_t *,
                     const double *floats) {
  compute(ctx, "rms_norm", [&] {
    ctx->backend->rmsNorm(decodeAll(ctx, t, 3).data(), floats[0]);
  });
}

void parcrt_embedding(parcrt_context *ctx, const int64_t *t,
                      const int64_t *ints, const double *) {
  compute(ctx, "embedding", [&] {
    bool hasShard = ints[0] != 0;
    ctx->backend->embedding(decodeAll(ctx, t, hasShard ? 4 : 3).data(),
                            hasShard);
  });
}
void parcrt_take(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                 const double *) {
  compute(ctx, "take", [&] {
    bool hasShard = ints[0] != 0;
    ctx->backend->take(decodeAll(ctx, t, hasShard ? 4 : 3).data(), hasShard);
  });
}

void parcrt_reshape(parcrt_context *ctx, const int64_t *t, const int64_t *,
                    const double *) {
  compute(ctx, "reshape",
          [&] { ctx->backend->copy(decodeAll(ctx, t, 2).data()); });
}
void parcrt_transpose(parcrt_context *ctx, const int64_t *t,
                      const int64_t *ints, const double *) {
  compute(ctx, "transpose",
          [&] { ctx->backend->transpose(decodeAll(ctx, t, 2).data(), ints); });
}
void parcrt_reduce_sum(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  compute(ctx, "reduce_sum", [&] { reduce(ctx, Reduce::Sum, t, ints); });
}
void parcrt_reduce_mean(parcrt_context *ctx, const int64_t *t,
                        const int64_t *ints, const double *) {
  compute(ctx, "reduce_mean", [&] { reduce(ctx, Reduce::Mean, t, ints); });
}
void parcrt_reduce_max(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  compute(ctx, "reduce_max", [&] { reduce(ctx, Reduce::Max, t, ints); });
}
void parcrt_concat(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                   const double *) {
  compute(ctx, "concat", [&] {
    int numInputs = static_cast<int>(ints[0]);
    std::vector<TensorRef> refs = decodeAll(ctx, t, numInputs + 1);
    ctx->backend->concat(refs.data(), numInputs, refs[numInputs], ints[1]);
  });
}
void parcrt_slice(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                  const double *) {
  compute(ctx, "slice", [&] {
    std::vector<TensorRef> refs = decodeAll(ctx, t, 2);
    ctx->backend->slice(refs.data(), ints, ints + refs[1].rank);
  });
}
void parcrt_constant(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                     const double *floats) {
  compute(ctx, "constant",
          [&] { ctx->backend->constant(decode(ctx, t), floats, ints[0]); });
}

void parcrt_attention(parcrt_context *ctx, const int64_t *t,
                      const int64_t *ints, const double *floats) {
  compute(ctx, "attention", [&] {
    ctx->backend->attention(decodeAll(ctx, t, 4).data(), ints[0] != 0,
                            floats[0]);
  });
}
void parcrt_cross_entropy(parcrt_context *ctx, const int64_t *t,
                          const int64_t *, const double *) {
  compute(ctx, "cross_entropy",
          [&] { ctx->backend->crossEntropy(decodeAll(ctx, t, 3).data()); });
}

void parcrt_broadcast_to(parcrt_context *ctx, const int64_t *t, const int64_t *,
                         const double *) {
  compute(ctx, "broadcast_to",
          [&] { ctx->backend->broadcastTo(decodeAll(ctx, t, 2).data()); });
}
void parcrt_slice_grad(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  compute(ctx, "slice_grad", [&] {
    // offsets and strides have one entry per dimension of the operand (and
    // of the result: the same rank).
    std::vector<TensorRef> refs = decodeAll(ctx, t, 2);
    ctx->backend->sliceGrad(refs.data(), ints, ints + refs[0].rank);
  });
}
void parcrt_activation_grad(parcrt_context *ctx, const int64_t *t,
                            const int64_t *ints, const double *) {
  compute(ctx, "activation_grad", [&] {
    static const Activation kinds[] = {
        Activation::Relu, Activation::Sigmoid, Activation::Silu,
        Activation::Tanh, Activation::GeluErf, Activation::GeluTanh};
    if (ints[0] < 0 || ints[0] >= static_cast<int64_t>(std::size(kinds)))
      fatal("activation_grad: unknown activation kind " +
            std::to_string(ints[0]) + " (expected 0 to 5)");
    ctx->backend->activationGrad(kinds[ints[0]], decodeAll(ctx, t, 3).data());
  });
}
void parcrt_softmax_grad(parcrt_context *ctx, const int64_t *t,
                         const int64_t *ints, const double *) {
  compute(ctx, "softmax_grad", [&] {
    ctx->backend->softmaxGrad(decodeAll(ctx, t, 3).data(), ints[0]);
  });
}
void parcrt_layer_norm_grad(parcrt_context *ctx, const int64_t *t,
                            const int64_t *, const double *floats) {
  compute(ctx, "layer_norm_grad", [&] {
    // x, gamma, g; dx, dgamma, dbeta.
    ctx->backend->layerNormGrad(decodeAll(ctx, t, 6).data(), floats[0]);
  });
}
void parcrt_rms_norm_grad(parcrt_context *ctx, const int64_t *t,
                          const int64_t *, const double *floats) {
  compute(ctx, "rms_norm_grad", [&] {
    // x, gamma, g; dx, dgamma.
    ctx->backend->rmsNormGrad(decodeAll(ctx, t, 5).data(), floats[0]);
  });
}
void parcrt_embedding_grad(parcrt_context *ctx, const int64_t *t,
                           const int64_t *ints, const double *) {
  compute(ctx, "embedding_grad", [&] {
    bool hasShard = ints[0] != 0;
    ctx->backend->embeddingGrad(decodeAll(ctx, t, hasShard ? 4 : 3).data(),
                                hasShard);
  });
}
void parcrt_attention_grad(parcrt_context *ctx, const int64_t *t,
                           const int64_t *ints, const double *floats) {
  compute(ctx, "attention_grad", [&] {
    // q, k, v, g; dq, dk, dv.
    ctx->backend->attentionGrad(decodeAll(ctx, t, 7).data(), ints[0] != 0,
                                floats[0]);
  });
}
void parcrt_cross_entropy_grad(parcrt_context *ctx, const int64_t *t,
                               const int64_t *ints, const double *) {
  compute(ctx, "cross_entropy_grad", [&] {
    bool hasShard = ints[1] != 0;
    ctx->backend->crossEntropyGrad(decodeAll(ctx, t, hasShard ? 6 : 4).data(),
                                   ints[0], hasShard);
  });
}

void parcrt_adamw_update(parcrt_context *ctx, const int64_t *t, const int64_t *,
                         const double *floats) {
  compute(ctx, "adamw_update", [&] {
    // param, grad, m, v, step; param', m', v'.
    ctx->backend->adamwUpdate(decodeAll(ctx, t, 8).data(), floats[0], floats[1],
                              floats[2], floats[3], floats[4]);
  });
}
void parcrt_sgd_update(parcrt_context *ctx, const int64_t *t, const int64_t *,
                       const double *floats) {
  compute(ctx, "sgd_update", [&] {
    // param, grad, buffer; param', buffer'.
    ctx->backend->sgdUpdate(decodeAll(ctx, t, 5).data(), floats[0], floats[1]);
  });
}
void parcrt_clip_coefficient(parcrt_context *ctx, const int64_t *t,
                             const int64_t *, const double *floats) {
  compute(ctx, "clip_coefficient", [&] {
    ctx->backend->clipCoefficient(decodeAll(ctx, t, 2).data(), floats[0]);
  });
}

void parcrt_all_reduce(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  collective(ctx, "all_reduce", t, ints, [&] {
    std::vector<int> axes = decodeGroup(ints);
    bool max = ints[0] == 1;
    std::vector<TensorRef> refs = decodeAll(ctx, t, 2);
    Watched watched(ctx->watchdog, "all_reduce", axes);
    ctx->backend->communicator().allReduce(axes, max, refs.data());
  });
}
void parcrt_all_gather(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  collective(ctx, "all_gather", t, ints, [&] {
    std::vector<int> axes = decodeGroup(ints);
    std::vector<TensorRef> refs = decodeAll(ctx, t, 2);
    Watched watched(ctx->watchdog, "all_gather", axes);
    ctx->backend->communicator().allGather(axes, ints[0], refs.data());
  });
}
void parcrt_reduce_scatter(parcrt_context *ctx, const int64_t *t,
                           const int64_t *ints, const double *) {
  collective(ctx, "reduce_scatter", t, ints, [&] {
    std::vector<int> axes = decodeGroup(ints);
    std::vector<TensorRef> refs = decodeAll(ctx, t, 2);
    Watched watched(ctx->watchdog, "reduce_scatter", axes);
    ctx->backend->communicator().reduceScatter(axes, ints[0], refs.data());
  });
}
void parcrt_all_to_all(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  collective(ctx, "all_to_all", t, ints, [&] {
    std::vector<int> axes = decodeGroup(ints);
    std::vector<TensorRef> refs = decodeAll(ctx, t, 2);
    Watched watched(ctx->watchdog, "all_to_all", axes);
    ctx->backend->communicator().allToAll(axes, ints[0], ints[1], refs.data());
  });
}
void parcrt_all_slice(parcrt_context *ctx, const int64_t *t,
                      const int64_t *ints, const double *) {
  compute(ctx, "all_slice", [&] {
    // Local: no communication, so nothing for the watchdog to watch.
    std::vector<int> axes = decodeGroup(ints);
    ctx->backend->allSlice(axes, ints[0], decodeAll(ctx, t, 2).data());
  });
}
void parcrt_axis_index(parcrt_context *ctx, const int64_t *t,
                       const int64_t *ints, const double *) {
  compute(ctx, "axis_index", [&] {
    std::vector<int> axes = decodeGroup(ints);
    ctx->backend->axisIndex(axes, decode(ctx, t));
  });
}

void parcrt_send(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                 const double *) {
  int peer = ctx->mesh.peer(static_cast<int>(ints[0]), ints[1]);
  pointToPoint(ctx, "send", t, peer, ints[2], [&] {
    // On cpu the send is buffered and returns at once; on cuda it may wait
    // for the peer (creating the pair's communicator).
    Watched watched(ctx->watchdog, "send to", peer, ints[2]);
    ctx->backend->communicator().send(peer, ints[2], decode(ctx, t));
  });
}
void parcrt_recv(parcrt_context *ctx, const int64_t *t, const int64_t *ints,
                 const double *) {
  int peer = ctx->mesh.peer(static_cast<int>(ints[0]), ints[1]);
  pointToPoint(ctx, "recv", t, peer, ints[2], [&] {
    Watched watched(ctx->watchdog, "recv from", peer, ints[2]);
    ctx->backend->communicator().recv(peer, ints[2], decode(ctx, t));
  });
}

} // extern "C"
