//===- Models.cpp - builds a model module from a configuration ------------===//

#include "parc/Models/Models.h"
#include "GraphBuilder.h"
#include "ModelBuilders.h"

using namespace mlir;
using namespace mlir::parc;

static Type getElementType(MLIRContext *context, StringRef dtype) {
  Builder b(context);
  if (dtype == "bf16")
    return b.getBF16Type();
  if (dtype == "f16")
    return b.getF16Type();
  return b.getF32Type();
}

OwningOpRef<ModuleOp> mlir::parc::buildModel(MLIRContext *context,
                                             const ModelConfig &config) {
  context->loadDialect<ParcDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(context));
  GraphBuilder g(*module, "forward", getElementType(context, config.dtype));
  switch (config.kind) {
  case ModelKind::Mlp:
    buildMlp(g, config);
    break;
  case ModelKind::Gpt:
    buildGpt(g, config);
    break;
  case ModelKind::Llama:
    buildLlama(g, config);
    break;
  case ModelKind::Resnet18:
  case ModelKind::Resnet50:
    buildResnet(g, config);
    break;
  case ModelKind::Vgg16:
    buildVgg(g, config);
    break;
  }
  return module;
}
