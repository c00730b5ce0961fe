//===- Llama.cpp - decoder-only transformer in Llama's layout -------------===//
//
// Parameter names and layouts are those of Hugging Face's LlamaForCausalLM
// state dict (nn.Linear weights stored [out, in]), so its safetensors
// checkpoints load as they are: RMSNorm, rotary position embeddings on q and
// k (rotate_half, as transformers computes them, with Llama 3's frequency
// scaling when configured), grouped-query attention and a SwiGLU MLP.
//
// q_proj/k_proj/v_proj are [heads * head_dim, hidden]: splitting their first
// dimension splits heads, so tensor parallelism shards them column-wise and
// o_proj row-wise, as Megatron-LM does.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"
#include "ModelBuilders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;

/// The rotary frequencies of transformers' default and "llama3" rope types:
/// theta^(-2i/d), and with scaling, long wavelengths divided by the factor
/// and the band between smoothed.
static SmallVector<double> getRotaryFrequencies(const ModelConfig &config,
                                                int64_t headDim) {
  SmallVector<double> frequencies;
  const RopeScaling &scaling = config.ropeScaling;
  for (int64_t i = 0; i < headDim / 2; ++i) {
    double frequency = std::pow(config.ropeTheta, -2.0 * i / headDim);
    if (scaling.factor > 0) {
      double wavelength = 2 * M_PI / frequency;
      double context = scaling.originalContext;
      if (wavelength > context / scaling.lowFrequencyFactor) {
        frequency /= scaling.factor;
      } else if (wavelength >= context / scaling.highFrequencyFactor) {
        double smooth =
            (context / wavelength - scaling.lowFrequencyFactor) /
            (scaling.highFrequencyFactor - scaling.lowFrequencyFactor);
        frequency =
            (1 - smooth) * frequency / scaling.factor + smooth * frequency;
      }
    }
    frequencies.push_back(frequency);
  }
  return frequencies;
}

namespace {
struct LlamaBuilder {
  GraphBuilder &g;
  const ModelConfig &config;
  Value cosines, sines;

  int64_t headDim() const { return config.hidden / config.heads; }

  Value rmsNorm(Value x, const std::string &prefix) {
    g.setScope(prefix);
    Value gamma =
        g.addParam(prefix + ".weight", {config.hidden}, g.constantInit(1));
    return RmsNormOp::create(g.builder(), g.loc(), x, gamma,
                             APFloat(config.normEpsilon));
  }

  /// x @ weight^T for an nn.Linear weight [out, in].
  Value linear(Value x, const std::string &prefix, int64_t in, int64_t out) {
    g.setScope(prefix);
    Value weight = g.addParam(prefix + ".weight", {out, in});
    return MatmulOp::create(g.builder(), g.loc(), x, weight, false,
                            /*transpose_rhs=*/true);
  }

  /// cos and sin of position * frequency, [seq, head_dim], each frequency
  /// twice (transformers' cat(freqs, freqs)).
  void buildRotaryTables() {
    int64_t s = config.seq, d = headDim();
    SmallVector<double> frequencies = getRotaryFrequencies(config, d);
    SmallVector<double> cosValues, sinValues;
    for (int64_t position = 0; position < s; ++position)
      for (int64_t i = 0; i < d; ++i) {
        double angle = position * frequencies[i % (d / 2)];
        cosValues.push_back(std::cos(angle));
        sinValues.push_back(std::sin(angle));
      }
    g.setScope("model.rotary_emb");
    cosines = g.constant({s, d}, cosValues);
    sines = g.constant({s, d}, sinValues);
  }

  /// x * cos + rotate_half(x) * sin for x [batch, heads, seq, head_dim],
  /// rotate_half(x) = cat(-x[..., d/2:], x[..., :d/2]).
  Value rotate(Value x, int64_t heads) {
    int64_t b = config.batch, s = config.seq, half = headDim() / 2;
    auto halfOf = [&](int64_t offset) -> Value {
      return SliceOp::create(
          g.builder(), g.loc(), x, ArrayRef<int64_t>{0, 0, 0, offset},
          ArrayRef<int64_t>{b, heads, s, half}, ArrayRef<int64_t>{1, 1, 1, 1});
    };
    Value firstHalf = halfOf(0), secondHalf = halfOf(half);
    Value negated = NegOp::create(g.builder(), g.loc(), secondHalf);
    Value rotated = ConcatOp::create(g.builder(), g.loc(),
                                     ValueRange{negated, firstHalf}, 3);
    Value scaled = MulOp::create(g.builder(), g.loc(), x, cosines);
    Value shifted = MulOp::create(g.builder(), g.loc(), rotated, sines);
    return AddOp::create(g.builder(), g.loc(), scaled, shifted);
  }

  /// A projection to `heads` heads, [batch, heads, seq, head_dim].
  Value projectHeads(Value x, const std::string &prefix, int64_t heads) {
    int64_t b = config.batch, s = config.seq, d = headDim();
    Value projected = linear(x, prefix, config.hidden, heads * d);
    Value split = g.reshape(projected, {b, s, heads, d});
    return TransposeOp::create(g.builder(), g.loc(), split,
                               ArrayRef<int64_t>{0, 2, 1, 3});
  }

  Value attention(Value x, const std::string &prefix) {
    int64_t b = config.batch, s = config.seq, h = config.heads,
            kvHeads = config.getKvHeads();
    Value q = projectHeads(x, prefix + ".q_proj", h);
    Value k = projectHeads(x, prefix + ".k_proj", kvHeads);
    Value v = projectHeads(x, prefix + ".v_proj", kvHeads);
    g.setScope(prefix);
    q = rotate(q, h);
    k = rotate(k, kvHeads);
    Value context = AttentionOp::create(
        g.builder(), g.loc(), q, k, v, /*mask=*/Value(),
        /*causal=*/true, APFloat(1.0 / std::sqrt(double(headDim()))));
    context = TransposeOp::create(g.builder(), g.loc(), context,
                                  ArrayRef<int64_t>{0, 2, 1, 3});
    context = g.reshape(context, {b, s, h * headDim()});
    return linear(context, prefix + ".o_proj", h * headDim(), config.hidden);
  }

  /// down(silu(gate(x)) * up(x)).
  Value mlp(Value x, const std::string &prefix) {
    int64_t hidden = config.hidden, ffn = config.getFfn();
    Value gate = linear(x, prefix + ".gate_proj", hidden, ffn);
    Value up = linear(x, prefix + ".up_proj", hidden, ffn);
    g.setScope(prefix);
    Value activated = SiluOp::create(g.builder(), g.loc(), gate);
    Value product = MulOp::create(g.builder(), g.loc(), activated, up);
    return linear(product, prefix + ".down_proj", ffn, hidden);
  }

  void build() {
    auto [inputIds, labels] =
        g.addTokenArguments(config.batch, config.seq, config.vocab);

    g.setScope("model.embed_tokens");
    Value embeddings =
        g.addParam("model.embed_tokens.weight", {config.vocab, config.hidden});
    Value x = EmbeddingOp::create(g.builder(), g.loc(), embeddings, inputIds,
                                  /*shard=*/Value());
    buildRotaryTables();

    for (int64_t layer = 0; layer < config.layers; ++layer) {
      std::string prefix = "model.layers." + std::to_string(layer);
      Value a = attention(rmsNorm(x, prefix + ".input_layernorm"),
                          prefix + ".self_attn");
      g.setScope(prefix);
      x = g.residual(x, a, prefix + ".self_attn.residual");
      Value m = mlp(rmsNorm(x, prefix + ".post_attention_layernorm"),
                    prefix + ".mlp");
      g.setScope(prefix);
      x = g.residual(x, m, prefix + ".mlp.residual");
    }
    x = rmsNorm(x, "model.norm");
    g.finishLanguageModel(x, embeddings, labels, config.tieEmbeddings);
  }
};
} // namespace

void mlir::parc::buildLlama(GraphBuilder &g, const ModelConfig &config) {
  LlamaBuilder{g, config}.build();
}
