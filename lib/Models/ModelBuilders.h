//===- ModelBuilders.h - one builder per model family -----------*- C++ -*-===//

#ifndef PARC_LIB_MODELS_MODELBUILDERS_H
#define PARC_LIB_MODELS_MODELBUILDERS_H

#include "parc/Models/Models.h"

namespace mlir::parc {
class GraphBuilder;

void buildMlp(GraphBuilder &g, const ModelConfig &config);
void buildGpt(GraphBuilder &g, const ModelConfig &config);
void buildLlama(GraphBuilder &g, const ModelConfig &config);
/// ResNet-18 or ResNet-50, by config.kind.
void buildResnet(GraphBuilder &g, const ModelConfig &config);
void buildVgg(GraphBuilder &g, const ModelConfig &config);

} // namespace mlir::parc

#endif // PARC_LIB_MODELS_MODELBUILDERS_H
