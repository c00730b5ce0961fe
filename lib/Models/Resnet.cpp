//===- Resnet.cpp - ResNet-18 and ResNet-50 in torchvision's layout -------===//
//
// Parameter and buffer names and layouts are torchvision's (conv1, bn1,
// layerL.B.{conv,bn}N, layerL.0.downsample.{0,1}, fc), so its state dicts
// load as they are; num_batches_tracked, which only momentum=None reads, is
// left out. Images are [batch, 3, image, image]; strides follow ResNet
// v1.5 (the 3x3 convolution of a bottleneck strides).
//
// Batch normalization is parc.batch_norm in training mode: the batch's
// mean and biased variance over (batch, height, width) normalize, its
// unbiased variance and mean update the running statistics with PyTorch's
// momentum 0.1. The model's statistics are the whole batch's; a plan with
// data parallelism makes them each rank's (DDP's) unless it asks for
// SyncBatchNorm's (ApplyPlan sets the ops' groups).
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"
#include "ModelBuilders.h"

#include <array>

using namespace mlir;
using namespace mlir::parc;

namespace {
constexpr double kBatchNormEpsilon = 1e-5;
constexpr double kBatchNormMomentum = 0.1;

struct ResnetBuilder {
  GraphBuilder &g;
  const ModelConfig &config;
  /// The running statistics' next values and names, returned after the
  /// loss.
  SmallVector<Value> bufferUpdates;
  SmallVector<std::string> bufferNames;

  OpBuilder &b() { return g.builder(); }
  ArrayRef<int64_t> shape(Value x) {
    return cast<RankedTensorType>(x.getType()).getShape();
  }
  Value scalar(double value) { return g.constant({}, {value}); }

  Value conv(Value x, const std::string &name, int64_t filters, int64_t kernel,
             int64_t stride, int64_t padding) {
    return g.torchConv2d(x, name, filters, kernel, stride, padding,
                         /*bias=*/false);
  }

  /// running + momentum (observed - running), returned as `name`'s next value.
  void updateRunning(Value running, Value observed, const std::string &name) {
    Value step = MulOp::create(b(), g.loc(),
                               SubOp::create(b(), g.loc(), observed, running),
                               scalar(kBatchNormMomentum));
    bufferUpdates.push_back(AddOp::create(b(), g.loc(), running, step));
    bufferNames.push_back(name);
  }

  Value batchNorm(Value x, const std::string &name) {
    g.setScope(name);
    int64_t channels = shape(x)[1];
    Value gamma = g.addParam(name + ".weight", {channels}, g.constantInit(1));
    Value beta = g.addParam(name + ".bias", {channels}, g.constantInit(0));
    Type element = g.getElementType();
    Value runningMean =
        g.addArgument(ArgumentRole::Buffer, name + ".running_mean", {channels},
                      element, g.constantInit(0));
    Value runningVar =
        g.addArgument(ArgumentRole::Buffer, name + ".running_var", {channels},
                      element, g.constantInit(1));
    auto batchNorm = BatchNormOp::create(b(), g.loc(), x, gamma, beta,
                                         b().getF64FloatAttr(kBatchNormEpsilon),
                                         /*groups=*/b().getI64IntegerAttr(1));
    updateRunning(runningMean, batchNorm.getMean(), name + ".running_mean");
    updateRunning(runningVar, batchNorm.getVariance(), name + ".running_var");
    return batchNorm.getResult();
  }

  Value relu(Value x) { return ReluOp::create(b(), g.loc(), x); }

  /// BasicBlock (two 3x3 convolutions) or Bottleneck (1x1, 3x3, 1x1 to
  /// four times the width), with torchvision's downsample where the shape
  /// changes.
  Value block(Value x, const std::string &name, int64_t width, int64_t stride,
              bool bottleneck) {
    int64_t out = bottleneck ? 4 * width : width;
    Value y;
    if (bottleneck) {
      y = relu(
          batchNorm(conv(x, name + ".conv1", width, 1, 1, 0), name + ".bn1"));
      y = relu(batchNorm(conv(y, name + ".conv2", width, 3, stride, 1),
                         name + ".bn2"));
      y = batchNorm(conv(y, name + ".conv3", out, 1, 1, 0), name + ".bn3");
    } else {
      y = relu(batchNorm(conv(x, name + ".conv1", width, 3, stride, 1),
                         name + ".bn1"));
      y = batchNorm(conv(y, name + ".conv2", width, 3, 1, 1), name + ".bn2");
    }
    Value identity = x;
    if (stride != 1 || shape(x)[1] != out)
      identity = batchNorm(conv(x, name + ".downsample.0", out, 1, stride, 0),
                           name + ".downsample.1");
    g.setScope(name);
    return relu(g.residual(y, identity, name + ".residual"));
  }

  void build() {
    bool bottleneck = config.kind == ModelKind::Resnet50;
    // Blocks per stage, torchvision's resnet18 and resnet50.
    const std::array<int64_t, 4> blocks =
        bottleneck ? std::array<int64_t, 4>{3, 4, 6, 3}
                   : std::array<int64_t, 4>{2, 2, 2, 2};
    int64_t image = config.image;
    Value x =
        g.addArgument(ArgumentRole::Input, "images",
                      {config.batch, 3, image, image}, g.getElementType());
    Value labels =
        g.addArgument(ArgumentRole::Label, "labels", {config.batch},
                      b().getI64Type(), g.uniformInit(0, config.vocab));
    x = relu(batchNorm(conv(x, "conv1", 64, 7, 2, 3), "bn1"));
    g.setScope("maxpool");
    x = MaxPool2dOp::create(b(), g.loc(), x, b().getDenseI64ArrayAttr({3, 3}),
                            b().getDenseI64ArrayAttr({2, 2}),
                            b().getDenseI64ArrayAttr({1, 1, 1, 1}),
                            b().getDenseI64ArrayAttr({1, 1}));
    for (auto [index, count] : llvm::enumerate(blocks)) {
      int64_t width = 64 << index;
      for (int64_t i = 0; i < count; ++i)
        x = block(x,
                  "layer" + std::to_string(index + 1) + "." + std::to_string(i),
                  width, i == 0 && index > 0 ? 2 : 1, bottleneck);
    }
    // Adaptive average pooling to 1x1, then torchvision's fc ([out, in]).
    g.setScope("avgpool");
    x = ReduceMeanOp::create(b(), g.loc(), x, ArrayRef<int64_t>{2, 3},
                             /*keepdims=*/false);
    Value logits = g.torchLinear(x, "fc", config.vocab);
    g.setScope("loss");
    SmallVector<Value> results = {
        CrossEntropyOp::create(b(), g.loc(), logits, labels)};
    llvm::append_range(results, bufferUpdates);
    SmallVector<StringRef> names = {"loss"};
    for (const std::string &name : bufferNames)
      names.push_back(name);
    g.finish(results, names);
  }
};
} // namespace

void mlir::parc::buildResnet(GraphBuilder &g, const ModelConfig &config) {
  ResnetBuilder{g, config, {}, {}}.build();
}
