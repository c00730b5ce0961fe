//===- Dnnl.cpp - the oneDNN primitives of the cpu kernels ----------------===//

#include "cpu/Dnnl.h"

#include "core/Fatal.h"

#include <array>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

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

/// A convolution's pass, shapes and geometry, as a primitive cache's key.
using ConvolutionKey = std::array<int64_t, 22>;

ConvolutionKey keyOf(cpu::dnnl::ConvolutionPass pass,
                     const cpu::dnnl::Convolution &shape) {
  ConvolutionKey key;
  auto at =
      std::copy(std::begin(shape.input), std::end(shape.input), key.begin());
  at = std::copy(std::begin(shape.weight), std::end(shape.weight), at);
  at = std::copy(std::begin(shape.output), std::end(shape.output), at);
  at = std::copy(std::begin(shape.strides), std::end(shape.strides), at);
  at = std::copy(std::begin(shape.padding), std::end(shape.padding), at);
  at = std::copy(std::begin(shape.dilations), std::end(shape.dilations), at);
  *at++ = shape.groups;
  *at = static_cast<int64_t>(pass);
  return key;
}

/// One of a convolution pass's three tensors: the plain layout the kernel's
/// caller holds it in and the layout the primitive reads or writes it in
/// (oneDNN's choice, blocked over channels where its JIT kernels want it),
/// with the reorder between the two when they differ: plain to chosen for
/// the two the pass reads, chosen to plain for the one it writes.
struct ConvolutionOperand {
  memory::desc plain, chosen;
  ::dnnl::reorder reorder;

  bool reordered() const { return plain != chosen; }
};

struct ConvolutionPrimitive {
  ::dnnl::primitive primitive;
  /// The primitive's arguments for the input, the weight and the output.
  int inputArgument, weightArgument, outputArgument;
  ConvolutionOperand input, weight, output;
};

ConvolutionOperand operandOf(const memory::desc &plain,
                             const memory::desc &chosen, bool written) {
  ConvolutionOperand operand{plain, chosen, {}};
  if (operand.reordered())
    operand.reorder =
        ::dnnl::reorder(written ? ::dnnl::reorder::primitive_desc(
                                      cpuEngine(), chosen, cpuEngine(), plain)
                                : ::dnnl::reorder::primitive_desc(
                                      cpuEngine(), plain, cpuEngine(), chosen));
  return operand;
}

/// The primitive of one convolution pass, made on first use. oneDNN chooses
/// the layouts (format `any`), as PyTorch lets it: over the plain NCHW
/// ones it runs im2col and a GEMM for every pass, which made ResNet-18's
/// CIFAR step 1.7-1.8x slower than its direct JIT kernels over channel
/// blocks (bench/cnn).
ConvolutionPrimitive &
convolutionPrimitive(cpu::dnnl::ConvolutionPass pass,
                     const cpu::dnnl::Convolution &shape) {
  static thread_local std::map<ConvolutionKey, ConvolutionPrimitive> cache;
  ConvolutionKey key = keyOf(pass, shape);
  auto found = cache.find(key);
  if (found != cache.end())
    return found->second;
  using tag = memory::format_tag;
  auto plain = [](const int64_t *dims, int64_t count, tag format) {
    return memory::desc(memory::dims(dims, dims + count),
                        memory::data_type::f32, format);
  };
  memory::desc input = plain(shape.input, 4, tag::nchw);
  memory::desc output = plain(shape.output, 4, tag::nchw);
  // A grouped weight is [groups, filters / groups, channels / groups, kh, kw].
  int64_t groups = shape.groups;
  memory::dims grouped = {groups, shape.weight[0] / groups, shape.weight[1],
                          shape.weight[2], shape.weight[3]};
  memory::desc weight =
      groups == 1 ? plain(shape.weight, 4, tag::oihw)
                  : memory::desc(grouped, memory::data_type::f32, tag::goihw);
  auto any = [](const memory::desc &desc) {
    return memory::desc(desc.dims(), memory::data_type::f32, tag::any);
  };
  // oneDNN counts dilation from 0 (no gaps between the kernel's taps).
  memory::dims strides = {shape.strides[0], shape.strides[1]};
  memory::dims dilations = {shape.dilations[0] - 1, shape.dilations[1] - 1};
  memory::dims before = {shape.padding[0], shape.padding[1]};
  memory::dims after = {shape.padding[2], shape.padding[3]};
  algorithm direct = algorithm::convolution_direct;
  ::dnnl::convolution_forward::primitive_desc forward(
      {::dnnl::prop_kind::forward_training, direct, any(input), any(weight),
       any(output), strides, dilations, before, after},
      cpuEngine());
  using Pass = cpu::dnnl::ConvolutionPass;
  auto made = [&](::dnnl::primitive primitive, int inputArgument,
                  int weightArgument, int outputArgument,
                  const memory::desc &chosenInput,
                  const memory::desc &chosenWeight,
                  const memory::desc &chosenOutput) -> ConvolutionPrimitive & {
    ConvolutionPrimitive made{
        primitive,
        inputArgument,
        weightArgument,
        outputArgument,
        operandOf(input, chosenInput, pass == Pass::InputGrad),
        operandOf(weight, chosenWeight, pass == Pass::WeightGrad),
        operandOf(output, chosenOutput, pass == Pass::Forward)};
    return cache.emplace(key, made).first->second;
  };
  switch (pass) {
  case Pass::Forward:
    return made(::dnnl::convolution_forward(forward), DNNL_ARG_SRC,
                DNNL_ARG_WEIGHTS, DNNL_ARG_DST, forward.src_desc(),
                forward.weights_desc(), forward.dst_desc());
  case Pass::InputGrad: {
    ::dnnl::convolution_backward_data::primitive_desc desc(
        {direct, any(input), any(weight), any(output), strides, dilations,
         before, after},
        cpuEngine(), forward);
    return made(::dnnl::convolution_backward_data(desc), DNNL_ARG_DIFF_SRC,
                DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST, desc.diff_src_desc(),
                desc.weights_desc(), desc.diff_dst_desc());
  }
  case Pass::WeightGrad: {
    ::dnnl::convolution_backward_weights::primitive_desc desc(
        {direct, any(input), any(weight), any(output), strides, dilations,
         before, after},
        cpuEngine(), forward);
    return made(::dnnl::convolution_backward_weights(desc), DNNL_ARG_SRC,
                DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST, desc.src_desc(),
                desc.diff_weights_desc(), desc.diff_dst_desc());
  }
  }
  fatal("convolution: unknown pass");
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

void cpu::dnnl::convolution(ConvolutionPass pass, const Convolution &shape,
                            float *input, float *weight, float *output) {
  checked("convolution", [&] {
    ConvolutionPrimitive &made = convolutionPrimitive(pass, shape);
    // The chosen layouts' copies, one buffer per operand, kept and grown
    // across calls.
    static thread_local std::vector<float> copies[3];
    ::dnnl::stream &stream = cpuStream();
    std::unordered_map<int, memory> arguments;
    auto bind = [&](const ConvolutionOperand &operand, int argument,
                    float *data, std::vector<float> &copy, bool written) {
      memory plain(operand.plain, cpuEngine(), data);
      if (!operand.reordered()) {
        arguments.emplace(argument, plain);
        return std::optional<std::pair<memory, memory>>();
      }
      copy.resize(operand.chosen.get_size() / sizeof(float));
      memory chosen(operand.chosen, cpuEngine(), copy.data());
      if (!written)
        operand.reorder.execute(stream, plain, chosen);
      arguments.emplace(argument, chosen);
      return written ? std::optional(std::pair(chosen, plain)) : std::nullopt;
    };
    std::optional<std::pair<memory, memory>> writeBack[] = {
        bind(made.input, made.inputArgument, input, copies[0],
             pass == ConvolutionPass::InputGrad),
        bind(made.weight, made.weightArgument, weight, copies[1],
             pass == ConvolutionPass::WeightGrad),
        bind(made.output, made.outputArgument, output, copies[2],
             pass == ConvolutionPass::Forward)};
    made.primitive.execute(stream, arguments);
    const ConvolutionOperand *operands[] = {&made.input, &made.weight,
                                            &made.output};
    for (int index = 0; index < 3; ++index)
      if (writeBack[index])
        operands[index]->reorder.execute(stream, writeBack[index]->first,
                                         writeBack[index]->second);
  });
}
