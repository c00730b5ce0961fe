//===- Gpt.cpp - decoder-only transformer in GPT-2's layout ---------------===//
//
// Parameter names and layouts are those of GPT-2's state dict (Conv1D
// weights stored [in, out]), so a GPT-2 safetensors checkpoint loads as is.
// wpe is [seq, hidden]: with seq = 1024 it is GPT-2's full table.
//
// The fused QKV projection keeps GPT-2's bytes but names their structure:
// c_attn.weight is [hidden, 3, heads, head_dim] (checkpoint shape
// [hidden, 3 * hidden], the same row-major elements), so that splitting its
// heads dimension is a plain sharding and tensor parallelism splits heads.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"
#include "ModelBuilders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;

namespace {
struct GptBuilder {
  GraphBuilder &g;
  const ModelConfig &config;
  int64_t headDim() const { return config.hidden / config.heads; }

  Value layerNorm(Value x, const std::string &prefix) {
    g.setScope(prefix);
    Value gamma =
        g.addParam(prefix + ".weight", {config.hidden}, g.constantInit(1));
    Value beta =
        g.addParam(prefix + ".bias", {config.hidden}, g.constantInit(0));
    return LayerNormOp::create(g.builder(), g.loc(), x, gamma, beta,
                               APFloat(1e-5));
  }

  /// Conv1D of GPT-2: x @ weight[in, out] + bias[out].
  Value conv1d(Value x, const std::string &prefix, int64_t in, int64_t out) {
    g.setScope(prefix);
    Value weight = g.addParam(prefix + ".weight", {in, out});
    Value bias = g.addParam(prefix + ".bias", {out}, g.constantInit(0));
    return g.linear(x, weight, bias);
  }

  /// Part `which` (q, k or v) of qkv [batch, seq, 3, heads, head_dim] as
  /// [batch, heads, seq, head_dim].
  Value splitHeads(Value qkv, int64_t which) {
    int64_t b = config.batch, s = config.seq, h = config.heads, d = headDim();
    Value part = SliceOp::create(
        g.builder(), g.loc(), qkv, ArrayRef<int64_t>{0, 0, which, 0, 0},
        ArrayRef<int64_t>{b, s, 1, h, d}, ArrayRef<int64_t>{1, 1, 1, 1, 1});
    return TransposeOp::create(g.builder(), g.loc(),
                               g.reshape(part, {b, s, h, d}),
                               ArrayRef<int64_t>{0, 2, 1, 3});
  }

  /// x [batch, seq, hidden] times c_attn [hidden, 3, heads, head_dim] as one
  /// GEMM over batch and sequence together: [batch, seq, 3, heads,
  /// head_dim], whose heads tensor parallelism may split.
  Value projectQkv(Value x, const std::string &prefix) {
    int64_t hidden = config.hidden, h = config.heads, d = headDim();
    g.setScope(prefix);
    Value weight = g.addParam(prefix + ".weight", {hidden, 3, h, d});
    g.setCheckpointShape({hidden, 3 * hidden});
    Value bias = g.addParam(prefix + ".bias", {3, h, d}, g.constantInit(0));
    g.setCheckpointShape({3 * hidden});
    Value qkv = MatmulOp::create(g.builder(), g.loc(), x, weight, false, false,
                                 false, ArrayRef<int64_t>{1, 1, 3});
    return AddOp::create(g.builder(), g.loc(), qkv, bias);
  }

  Value attention(Value x, const std::string &prefix) {
    int64_t b = config.batch, s = config.seq, hidden = config.hidden;
    Value qkv = projectQkv(x, prefix + ".c_attn");
    g.setScope(prefix);
    Value q = splitHeads(qkv, 0), k = splitHeads(qkv, 1),
          v = splitHeads(qkv, 2);
    Value context = AttentionOp::create(
        g.builder(), g.loc(), q, k, v, /*mask=*/Value(),
        /*causal=*/true, APFloat(1.0 / std::sqrt(double(headDim()))));
    context = TransposeOp::create(g.builder(), g.loc(), context,
                                  ArrayRef<int64_t>{0, 2, 1, 3});
    context = g.reshape(context, {b, s, hidden});
    return conv1d(context, prefix + ".c_proj", hidden, hidden);
  }

  Value mlp(Value x, const std::string &prefix) {
    Value h = conv1d(x, prefix + ".c_fc", config.hidden, config.getFfn());
    h = GeluOp::create(g.builder(), g.loc(), h, GeluApproximation::Tanh);
    return conv1d(h, prefix + ".c_proj", config.getFfn(), config.hidden);
  }

  void build() {
    auto [inputIds, labels] =
        g.addTokenArguments(config.batch, config.seq, config.vocab);

    g.setScope("wte");
    Value wte = g.addParam("wte.weight", {config.vocab, config.hidden});
    Value x = EmbeddingOp::create(g.builder(), g.loc(), wte, inputIds,
                                  /*shard=*/Value());
    g.setScope("wpe");
    Value wpe = g.addParam("wpe.weight", {config.seq, config.hidden});
    x = g.residual(x, wpe, "embeddings");

    for (int64_t layer = 0; layer < config.layers; ++layer) {
      std::string prefix = "h." + std::to_string(layer);
      Value a = attention(layerNorm(x, prefix + ".ln_1"), prefix + ".attn");
      g.setScope(prefix);
      x = g.residual(x, a, prefix + ".attn.residual");
      Value m = mlp(layerNorm(x, prefix + ".ln_2"), prefix + ".mlp");
      g.setScope(prefix);
      x = g.residual(x, m, prefix + ".mlp.residual");
    }
    x = layerNorm(x, "ln_f");
    g.finishLanguageModel(x, wte, labels, config.tieEmbeddings);
  }
};
} // namespace

void mlir::parc::buildGpt(GraphBuilder &g, const ModelConfig &config) {
  GptBuilder{g, config}.build();
}
