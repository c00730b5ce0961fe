//===- Mlp.cpp - multi-layer perceptron classifier ------------------------===//
//
// x [batch, hidden] -> fc1 -> relu -> ... -> fcN [.., vocab] -> cross-entropy
// against labels [batch]. Hidden layers are `ffn` wide.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"
#include "ModelBuilders.h"

using namespace mlir;
using namespace mlir::parc;

void mlir::parc::buildMlp(GraphBuilder &g, const ModelConfig &config) {
  Type ids = g.builder().getI64Type();
  Value x = g.addArgument(ArgumentRole::Input, "x",
                          {config.batch, config.hidden}, g.getElementType());
  Value labels =
      g.addArgument(ArgumentRole::Label, "labels", {config.batch}, ids,
                    g.uniformInit(0, config.vocab));
  int64_t width = config.hidden;
  for (int64_t layer = 1; layer <= config.layers; ++layer) {
    std::string scope = "fc" + std::to_string(layer);
    int64_t out = layer == config.layers ? config.vocab : config.getFfn();
    g.setScope(scope);
    Value weight = g.addParam(scope + ".weight", {width, out});
    Value bias = g.addParam(scope + ".bias", {out}, g.constantInit(0));
    x = g.linear(x, weight, bias);
    if (layer != config.layers)
      x = ReluOp::create(g.builder(), g.loc(), x);
    width = out;
  }
  g.setScope("loss");
  Value loss = CrossEntropyOp::create(g.builder(), g.loc(), x, labels);
  g.finish(loss, {"loss"});
}
