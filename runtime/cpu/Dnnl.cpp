//===- Dnnl.cpp - the oneDNN primitives of the cpu kernels ----------------===//

#include "cpu/Dnnl.h"

#include "core/Fatal.h"

#include <map>
#include <string>
#include <tuple>

using namespace parcrt;
using ::dnnl::algorithm;
using ::dnnl::memory;

namespace {
::dnnl::engine &cpuEngine() {
  static ::dnnl::engine engine(::dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN's default scratchpad is shared by all primitives, so a primitive
// must run on the thread that made it: each thread has its own stream and
// primitives (the kernel team's threads persist, so theirs are kept too).
::dnnl::stream &cpuStream() {
  static thread_local ::dnnl::stream stream(cpuEngine());
  return stream;
}

memory::desc vector(int64_t count) {
  return memory::desc({count}, memory::data_type::f32, memory::format_tag::a);
}

memory wrap(int64_t count, const float *data) {
  // oneDNN's memory objects take non-const handles; sources are only read.
  return memory(vector(count), cpuEngine(), const_cast<float *>(data));
}

using EltwiseKey = std::tuple<algorithm, float, float, int64_t>;

struct EltwisePrimitives {
  ::dnnl::eltwise_forward::primitive_desc forwardDesc;
  ::dnnl::eltwise_forward forward;
  ::dnnl::eltwise_backward backward;
};

/// The forward primitive (and its backward, made on first use) of `key`.
EltwisePrimitives &eltwisePrimitives(const EltwiseKey &key, bool backward) {
  static thread_local std::map<EltwiseKey, EltwisePrimitives> cache;
  auto [kind, alpha, beta, count] = key;
  auto found = cache.find(key);
  if (found == cache.end()) {
    ::dnnl::eltwise_forward::primitive_desc desc(
        {::dnnl::prop_kind::forward_training, kind, vector(count), alpha, beta},
        cpuEngine());
    found =
        cache
            .emplace(key,
                     EltwisePrimitives{desc, ::dnnl::eltwise_forward(desc), {}})
            .first;
  }
  EltwisePrimitives &primitives = found->second;
  if (backward && !primitives.backward) {
    ::dnnl::eltwise_backward::primitive_desc desc(
        {kind, vector(count), vector(count), alpha, beta}, cpuEngine(),
        primitives.forwardDesc);
    primitives.backward = ::dnnl::eltwise_backward(desc);
  }
  return primitives;
}

/// Runs `body`, ending the job with oneDNN's message if it throws.
template <typename Body> void checked(const char *what, Body &&body) {
  try {
    body();
  } catch (const ::dnnl::error &error) {
    fatal(std::string("oneDNN ") + what + ": " + error.what());
  }
}
} // namespace

void cpu::dnnl::gemm(bool transposeA, bool transposeB, int64_t m, int64_t n,
                     int64_t k, float alpha, const float *a, int64_t lda,
                     const float *b, int64_t ldb, float beta, float *c,
                     int64_t ldc) {
  if (dnnl_sgemm(transposeA ? 'T' : 'N', transposeB ? 'T' : 'N', m, n, k, alpha,
                 a, lda, b, ldb, beta, c, ldc) != dnnl_success)
    fatal("oneDNN sgemm failed on a " + std::to_string(m) + "x" +
          std::to_string(n) + "x" + std::to_string(k) + " product");
}

std::optional<cpu::dnnl::Eltwise>
cpu::dnnl::eltwiseOf(Backend::Activation kind) {
  using Activation = Backend::Activation;
  switch (kind) {
  case Activation::Relu:
    return std::nullopt;
  case Activation::Sigmoid:
    return Eltwise{algorithm::eltwise_logistic};
  case Activation::Silu:
    return Eltwise{algorithm::eltwise_swish, 1.0f};
  case Activation::Tanh:
    return Eltwise{algorithm::eltwise_tanh};
  case Activation::GeluErf:
    return Eltwise{algorithm::eltwise_gelu_erf};
  case Activation::GeluTanh:
    return Eltwise{algorithm::eltwise_gelu_tanh};
  }
  return std::nullopt;
}

void cpu::dnnl::eltwise(Eltwise f, const float *src, float *dst,
                        int64_t count) {
  if (count <= 0)
    return;
  checked("eltwise", [&] {
    eltwisePrimitives({f.kind, f.alpha, f.beta, count}, false)
        .forward.execute(cpuStream(), {{DNNL_ARG_SRC, wrap(count, src)},
                                       {DNNL_ARG_DST, wrap(count, dst)}});
  });
}

void cpu::dnnl::eltwiseGrad(Eltwise f, const float *src, const float *diffDst,
                            float *diffSrc, int64_t count) {
  if (count <= 0)
    return;
  checked("eltwise backward", [&] {
    eltwisePrimitives({f.kind, f.alpha, f.beta, count}, true)
        .backward.execute(cpuStream(),
                          {{DNNL_ARG_SRC, wrap(count, src)},
                           {DNNL_ARG_DIFF_DST, wrap(count, diffDst)},
                           {DNNL_ARG_DIFF_SRC, wrap(count, diffSrc)}});
  });
}
