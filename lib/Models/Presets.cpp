//===- Presets.cpp - named model configurations and their checks ----------===//

#include "parc/Models/Models.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::parc;

static ModelConfig gpt(int64_t layers, int64_t hidden, int64_t heads,
                       int64_t seq, int64_t vocab, int64_t batch) {
  ModelConfig config;
  config.kind = ModelKind::Gpt;
  config.layers = layers;
  config.hidden = hidden;
  config.heads = heads;
  config.seq = seq;
  config.vocab = vocab;
  config.batch = batch;
  return config;
}

/// Llama 3.1's layout: untied head, rope theta 500000 with frequency scaling
/// x8 beyond 8192 positions, 8 key/value heads in the published models.
static ModelConfig llama(int64_t layers, int64_t hidden, int64_t heads,
                         int64_t kvHeads, int64_t ffn, int64_t seq,
                         int64_t vocab, int64_t batch) {
  ModelConfig config = gpt(layers, hidden, heads, seq, vocab, batch);
  config.kind = ModelKind::Llama;
  config.kvHeads = kvHeads;
  config.ffn = ffn;
  config.tieEmbeddings = false;
  config.ropeTheta = 500000;
  config.ropeScaling.factor = 8;
  return config;
}

/// A small Llama whose frequency scaling starts at 16 positions, so that
/// short sequences exercise every band of Llama 3's rule.
static ModelConfig llamaTiny() {
  ModelConfig config = llama(2, 64, 4, 2, 176, 32, 256, 2);
  config.ropeScaling.originalContext = 16;
  return config;
}

/// torchvision's ImageNet CNNs: 224x224 images, 1000 classes.
static ModelConfig imageNet(ModelKind kind) {
  ModelConfig config;
  config.kind = kind;
  config.image = 224;
  config.vocab = 1000;
  config.batch = 1;
  return config;
}

std::optional<ModelConfig> mlir::parc::getModelPreset(StringRef name) {
  if (name == "mlp-tiny") {
    ModelConfig config;
    config.kind = ModelKind::Mlp;
    config.layers = 2;
    config.hidden = 64;
    config.ffn = 256;
    config.vocab = 16;
    config.batch = 8;
    return config;
  }
  // GPT-2's real configurations (n_ctx 1024, vocab 50257) and GPT-3 175B.
  return llvm::StringSwitch<std::optional<ModelConfig>>(name)
      .Case("gpt-tiny", gpt(2, 64, 4, 32, 256, 2))
      .Case("gpt2-small", gpt(12, 768, 12, 1024, 50257, 8))
      .Case("gpt2-xl", gpt(48, 1600, 25, 1024, 50257, 8))
      .Case("gpt3-175b", gpt(96, 12288, 96, 2048, 50257, 1))
      // Meta's Llama 3.1 configurations (vocab 128256, context 8192 as
      // trained before long-context extension).
      .Case("llama-tiny", llamaTiny())
      .Case("llama3-8b", llama(32, 4096, 32, 8, 14336, 8192, 128256, 1))
      .Case("llama3-70b", llama(80, 8192, 64, 8, 28672, 8192, 128256, 1))
      .Case("llama3-405b", llama(126, 16384, 128, 8, 53248, 8192, 128256, 1))
      .Case("resnet18", imageNet(ModelKind::Resnet18))
      .Case("resnet50", imageNet(ModelKind::Resnet50))
      .Case("vgg16", imageNet(ModelKind::Vgg16))
      .Default(std::nullopt);
}

ArrayRef<StringRef> mlir::parc::getModelPresetNames() {
  static const StringRef names[] = {"mlp-tiny",  "gpt-tiny",   "gpt2-small",
                                    "gpt2-xl",   "gpt3-175b",  "llama-tiny",
                                    "llama3-8b", "llama3-70b", "llama3-405b",
                                    "resnet18",  "resnet50",   "vgg16"};
  return names;
}

LogicalResult mlir::parc::verifyModelConfig(const ModelConfig &config,
                                            std::string &message) {
  std::pair<const char *, int64_t> sizes[] = {
      {"layers", config.layers}, {"hidden", config.hidden},
      {"heads", config.heads},   {"kv-heads", config.getKvHeads()},
      {"ffn", config.getFfn()},  {"seq", config.seq},
      {"vocab", config.vocab},   {"batch", config.batch},
      {"image", config.image}};
  // Each size fits in int32; tensors are checked for overflow once built.
  for (auto [name, value] : sizes)
    if (value <= 0 || value > std::numeric_limits<int32_t>::max()) {
      message = "--" + std::string(name) + " must be in [1, 2^31), got " +
                std::to_string(value);
      return failure();
    }
  bool transformer =
      config.kind == ModelKind::Gpt || config.kind == ModelKind::Llama;
  if (transformer && config.hidden % config.heads != 0) {
    message = "--hidden " + std::to_string(config.hidden) +
              " is not divisible by --heads " + std::to_string(config.heads);
    return failure();
  }
  if (config.kind == ModelKind::Llama) {
    int64_t kvHeads = config.getKvHeads();
    if (config.heads % kvHeads != 0) {
      message = "--kv-heads " + std::to_string(kvHeads) +
                " must divide --heads " + std::to_string(config.heads);
      return failure();
    }
    if ((config.hidden / config.heads) % 2 != 0) {
      message = "the head size (--hidden / --heads = " +
                std::to_string(config.hidden / config.heads) +
                ") must be even for rotary embeddings";
      return failure();
    }
    // The rotary tables are constants in the IR, built in memory.
    constexpr int64_t kMaxRotaryElements = int64_t(1) << 26;
    int64_t headDim = config.hidden / config.heads;
    if (config.seq > kMaxRotaryElements / headDim) {
      message = "--seq " + std::to_string(config.seq) + " x head size " +
                std::to_string(headDim) +
                " exceeds the 2^26 elements of a rotary table";
      return failure();
    }
    if (!(config.ropeTheta > 1) || !std::isfinite(config.ropeTheta)) {
      message = "--rope-theta must be a finite number above 1";
      return failure();
    }
  }
  if (config.kind == ModelKind::Vgg16) {
    int64_t size = getVggFeatureSize(config.image);
    if (size != 1 && (size == 0 || size % 7 != 0)) {
      message = "--image " + std::to_string(config.image) +
                " leaves VGG-16 a " + std::to_string(size) + "x" +
                std::to_string(size) +
                " feature map; its adaptive pool to 7x7 is built for 1x1 "
                "(images 32 to 63) and multiples of 7 (224, 448, ...)";
      return failure();
    }
  }
  if (config.dtype != "f32" && config.dtype != "bf16" &&
      config.dtype != "f16") {
    message = "--dtype must be f32, bf16 or f16, got '" + config.dtype + "'";
    return failure();
  }
  return success();
}
