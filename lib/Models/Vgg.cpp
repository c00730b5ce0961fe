//===- Vgg.cpp - VGG-16 in torchvision's layout ---------------------------===//
//
// torchvision's vgg16 (configuration D, no batch norm): thirteen 3x3
// convolutions with biases and ReLUs in five stages, each closed by a 2x2
// max pool, named features.N as torchvision's Sequential indexes them; an
// adaptive average pool to 7x7; classifier.{0,3,6}, the three linear
// layers. The classifier's dropouts are left out, so the model is
// deterministic and a train step can be checked against the serial
// reference (torchvision's eval() computes the same).
//
// The adaptive pool to 7x7 is exact for feature maps of 7k x 7k (an average
// over k x k windows) and of 1 x 1 (each feature repeated, as PyTorch
// does for CIFAR-size 32 x 32 images); other sizes are refused by
// verifyModelConfig.
//
//===----------------------------------------------------------------------===//

#include "GraphBuilder.h"
#include "ModelBuilders.h"

using namespace mlir;
using namespace mlir::parc;

namespace {
/// Output channels of each convolution; 0 is a max pool.
constexpr int64_t kFeatures[] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                                 0,  512, 512, 512, 0,   512, 512, 512, 0};
constexpr int64_t kPooledSize = 7;
constexpr int64_t kHidden = 4096;
} // namespace

int64_t mlir::parc::getVggFeatureSize(int64_t image) {
  for (int64_t channels : kFeatures)
    if (channels == 0)
      image /= 2;
  return image;
}

void mlir::parc::buildVgg(GraphBuilder &g, const ModelConfig &config) {
  OpBuilder &b = g.builder();
  int64_t batch = config.batch;
  Value x =
      g.addArgument(ArgumentRole::Input, "images",
                    {batch, 3, config.image, config.image}, g.getElementType());
  Value labels = g.addArgument(ArgumentRole::Label, "labels", {batch},
                               b.getI64Type(), g.uniformInit(0, config.vocab));
  auto square = [&](int64_t size) {
    return b.getDenseI64ArrayAttr({size, size});
  };
  // Sequential indexes: a convolution and its ReLU take two, a pool one.
  int64_t index = 0;
  for (int64_t channels : kFeatures) {
    std::string name = "features." + std::to_string(index);
    if (channels == 0) {
      g.setScope(name);
      x = MaxPool2dOp::create(b, g.loc(), x, square(2), square(2),
                              b.getDenseI64ArrayAttr({0, 0, 0, 0}), square(1));
      index += 1;
      continue;
    }
    x = g.torchConv2d(x, name, channels, 3, 1, 1, /*bias=*/true);
    x = ReluOp::create(b, g.loc(), x);
    index += 2;
  }
  g.setScope("avgpool");
  // verifyModelConfig admitted only sizes this pool is built for.
  auto features = cast<RankedTensorType>(x.getType());
  int64_t channels = features.getDimSize(1), size = features.getDimSize(2);
  if (size == 1) {
    auto type = RankedTensorType::get(
        {batch, channels, kPooledSize, kPooledSize}, g.getElementType());
    x = BroadcastToOp::create(b, g.loc(), type, x);
  } else if (size != kPooledSize) {
    int64_t window = size / kPooledSize;
    x = AvgPool2dOp::create(b, g.loc(), x, square(window), square(window),
                            b.getDenseI64ArrayAttr({0, 0, 0, 0}), square(1),
                            UnitAttr());
  }
  x = g.reshape(x, {batch, channels * kPooledSize * kPooledSize});
  x = ReluOp::create(b, g.loc(), g.torchLinear(x, "classifier.0", kHidden));
  x = ReluOp::create(b, g.loc(), g.torchLinear(x, "classifier.3", kHidden));
  Value logits = g.torchLinear(x, "classifier.6", config.vocab);
  g.setScope("loss");
  g.finish({CrossEntropyOp::create(b, g.loc(), logits, labels)}, {"loss"});
}
