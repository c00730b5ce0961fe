//===- Models.h - generators of parc model graphs ---------------*- C++ -*-===//
//
// `parc-model` builds MLP, GPT, Llama and ResNet graphs of any size without
// materializing weights: a model is only its IR.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_MODELS_MODELS_H
#define PARC_MODELS_MODELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace mlir::parc {

enum class ModelKind { Mlp, Gpt, Llama, Resnet18, Resnet50, Vgg16 };

/// Llama 3's rotary frequency scaling (transformers' rope_type "llama3");
/// factor 0 means none.
struct RopeScaling {
  double factor = 0;
  double lowFrequencyFactor = 1;
  double highFrequencyFactor = 4;
  double originalContext = 8192;
};

struct ModelConfig {
  ModelKind kind = ModelKind::Gpt;
  int64_t layers = 2;
  int64_t hidden = 64;
  int64_t heads = 4;
  /// Llama's key/value heads (grouped-query attention); 0 means `heads`.
  int64_t kvHeads = 0;
  /// Width of the MLP's hidden layers; 0 means 4 * hidden.
  int64_t ffn = 0;
  int64_t seq = 32;
  /// Token vocabulary of GPT; number of classes of the MLP and the CNNs.
  int64_t vocab = 256;
  int64_t batch = 2;
  /// Height and width of a CNN's square images.
  int64_t image = 32;
  /// Element type of parameters and activations: f32, bf16 or f16.
  std::string dtype = "f32";
  /// GPT's LM head reuses wte.weight, as GPT-2 does.
  bool tieEmbeddings = true;
  /// Llama's rotary base, frequency scaling and RMSNorm epsilon.
  double ropeTheta = 10000;
  RopeScaling ropeScaling;
  double normEpsilon = 1e-5;

  int64_t getFfn() const { return ffn ? ffn : 4 * hidden; }
  int64_t getKvHeads() const { return kvHeads ? kvHeads : heads; }
};

/// The configuration of a named preset (gpt-tiny, gpt2-small, gpt2-xl,
/// gpt3-175b, llama-tiny, llama3-8b, llama3-70b, llama3-405b, mlp-tiny), or
/// nullopt.
std::optional<ModelConfig> getModelPreset(StringRef name);

/// Names of all presets, for help texts.
ArrayRef<StringRef> getModelPresetNames();

/// The side of VGG-16's last feature map for `image`-sized inputs (five
/// halvings).
int64_t getVggFeatureSize(int64_t image);

/// Checks a configuration; the message says which option is wrong.
LogicalResult verifyModelConfig(const ModelConfig &config,
                                std::string &message);

/// Builds a module with one function `@forward` returning the scalar loss.
/// `config` must pass verifyModelConfig.
OwningOpRef<ModuleOp> buildModel(MLIRContext *context,
                                 const ModelConfig &config);

} // namespace mlir::parc

#endif // PARC_MODELS_MODELS_H
