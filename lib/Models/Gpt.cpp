//===- Gpt.cpp - decoder-only transformer in GPT-2's layout ---------------===//
//
// Parameter names and layouts are those of GPT-2's state dict (Conv1D
// weights stored [in, out]), so a GPT-2 safetensors checkpoint loads as is.
// wpe is [seq, hidden]: with seq = 1024 it is GPT-2's full table.
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
    Value gamma = g.addParam(prefix + ".weight", {config.hidden},
                             g.constantInit(1));
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

  /// Part `which` (0 = q, 1 = k, 2 = v) of the fused projection, as
  /// [batch, heads, seq, head_dim].
  Value splitHeads(Value qkv, int64_t which) {
    int64_t b = config.batch, s = config.seq, h = config.heads,
            d = headDim();
    Value part = SliceOp::create(g.builder(), g.loc(), qkv,
                                 ArrayRef<int64_t>{0, 0, which, 0, 0},
                                 ArrayRef<int64_t>{b, s, 1, h, d},
                                 ArrayRef<int64_t>{1, 1, 1, 1, 1});
    part = g.reshape(part, {b, s, h, d});
    return TransposeOp::create(g.builder(), g.loc(), part,
                               ArrayRef<int64_t>{0, 2, 1, 3});
  }

  Value attention(Value x, const std::string &prefix) {
    int64_t b = config.batch, s = config.seq, hidden = config.hidden;
    Value qkv = conv1d(x, prefix + ".c_attn", hidden, 3 * hidden);
    g.setScope(prefix);
    // c_attn's output columns are [q | k | v], each heads x head_dim.
    qkv = g.reshape(qkv, {b, s, 3, config.heads, headDim()});
    Value q = splitHeads(qkv, 0), k = splitHeads(qkv, 1),
          v = splitHeads(qkv, 2);
    Value context =
        AttentionOp::create(g.builder(), g.loc(), q, k, v, /*causal=*/true,
                            APFloat(1.0 / std::sqrt(double(headDim()))));
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

  Value residual(Value x, Value update) {
    return AddOp::create(g.builder(), g.loc(), x, update);
  }

  void build() {
    int64_t b = config.batch, s = config.seq;
    Type ids = g.builder().getI64Type();
    auto tokens = g.uniformInit(0, config.vocab);
    Value inputIds =
        g.addArgument(ArgumentRole::Input, "input_ids", {b, s}, ids, tokens);
    Value labels =
        g.addArgument(ArgumentRole::Label, "labels", {b, s}, ids, tokens);

    g.setScope("wte");
    Value wte = g.addParam("wte.weight", {config.vocab, config.hidden});
    Value x = EmbeddingOp::create(g.builder(), g.loc(), wte, inputIds,
                                  /*row_offset=*/Value());
    g.setScope("wpe");
    Value wpe = g.addParam("wpe.weight", {s, config.hidden});
    x = residual(x, wpe);

    for (int64_t layer = 0; layer < config.layers; ++layer) {
      std::string prefix = "h." + std::to_string(layer);
      Value a = attention(layerNorm(x, prefix + ".ln_1"), prefix + ".attn");
      g.setScope(prefix);
      x = residual(x, a);
      Value m = mlp(layerNorm(x, prefix + ".ln_2"), prefix + ".mlp");
      g.setScope(prefix);
      x = residual(x, m);
    }
    x = layerNorm(x, "ln_f");

    g.setScope("lm_head");
    Value head = config.tieEmbeddings
                     ? wte
                     : g.addParam("lm_head.weight",
                                  {config.vocab, config.hidden});
    Value logits = MatmulOp::create(g.builder(), g.loc(), x, head, false,
                                    /*transpose_rhs=*/true);
    g.setScope("loss");
    Value loss = CrossEntropyOp::create(g.builder(), g.loc(), logits, labels);
    g.finish(loss, {"loss"});
  }
};
} // namespace

void mlir::parc::buildGpt(GraphBuilder &g, const ModelConfig &config) {
  GptBuilder{g, config}.build();
}
