//===- parc-model.cpp - emits MLP and GPT model graphs --------------------===//
//
//   parc-model gpt-tiny > model.mlir
//   parc-model gpt --layers 4 --hidden 256 --heads 8 --stats
//   parc-model llama3-8b --stats
//   parc-model resnet18 --image 32 --classes 10 --batch 16
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/Models/ModelStats.h"
#include "parc/Models/Models.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
using namespace mlir::parc;
namespace cl = llvm::cl;

static cl::OptionCategory category("parc-model options");

static cl::opt<std::string> modelName(cl::Positional, cl::Required,
                                      cl::desc("<mlp|gpt|llama|preset>"),
                                      cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file for the IR"),
                                       cl::value_desc("file"),
                                       cl::init("-"), cl::cat(category));
static cl::opt<int64_t> layers("layers", cl::desc("Transformer blocks or "
                                                  "linear layers"), cl::cat(category));
static cl::opt<int64_t> hidden("hidden", cl::desc("Model width"), cl::cat(category));
static cl::opt<int64_t> heads("heads", cl::desc("Attention heads"), cl::cat(category));
static cl::opt<int64_t>
    kvHeads("kv-heads",
            cl::desc("Key/value heads of Llama's grouped-query attention "
                     "(default: --heads)"),
            cl::cat(category));
static cl::opt<double> ropeTheta("rope-theta", cl::desc("Llama's rotary base"),
                                 cl::cat(category));
static cl::opt<int64_t> ffn("ffn", cl::desc("MLP width (gpt: default 4 x hidden)"), cl::cat(category));
static cl::opt<int64_t> seq("seq", cl::desc("Sequence length"), cl::cat(category));
static cl::opt<int64_t> vocab("vocab", cl::desc("Vocabulary (GPT) or classes "
                                                "(MLP)"), cl::cat(category));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::cat(category));
static cl::opt<int64_t> image("image",
                              cl::desc("Image height and width (resnet)"),
                              cl::cat(category));
static cl::opt<int64_t> classes("classes",
                                cl::desc("Classes (resnet, mlp; as --vocab)"),
                                cl::cat(category));
static cl::opt<std::string> dtype("dtype", cl::desc("f32, bf16 or f16"),
                                  cl::cat(category));
static cl::opt<bool> untied("untied-lm-head",
                            cl::desc("Give GPT its own lm_head.weight instead "
                                     "of reusing wte.weight"),
                            cl::cat(category));

static std::optional<ModelConfig> baseConfig(StringRef name) {
  if (name == "gpt")
    return ModelConfig();
  if (name == "mlp")
    return getModelPreset("mlp-tiny");
  if (name == "llama")
    return getModelPreset("llama-tiny");
  return getModelPreset(name);
}

/// Removes `--stats` from the arguments and says whether it was there.
/// libLLVM registers its own `-stats` option, so ours cannot be a cl::opt.
static bool takeStatsFlag(int &argc, char **argv) {
  bool found = false;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    StringRef arg = argv[i];
    if (i > 0 && (arg == "--stats" || arg == "-stats")) {
      found = true;
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  return found;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  bool printStats = takeStatsFlag(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "parc model generator\n\n"
      "  --stats  print parameters, FLOPs per step and op counts instead of "
      "the IR\n           (the IR is still written with -o)\n");

  std::optional<ModelConfig> config = baseConfig(modelName);
  if (!config) {
    llvm::errs() << "parc-model: unknown model '" << modelName
                 << "'; expected mlp, gpt, llama or a preset:";
    for (StringRef preset : getModelPresetNames())
      llvm::errs() << " " << preset;
    llvm::errs() << "\n";
    return 1;
  }
  auto override = [](int64_t &field, const cl::opt<int64_t> &option) {
    if (option.getNumOccurrences())
      field = option;
  };
  override(config->layers, layers);
  override(config->hidden, hidden);
  override(config->heads, heads);
  // The configuration reads 0 key/value heads as "as many as --heads".
  if (kvHeads.getNumOccurrences() && kvHeads <= 0) {
    llvm::errs() << "parc-model: --kv-heads must be in [1, 2^31), got "
                 << kvHeads << "\n";
    return 1;
  }
  override(config->kvHeads, kvHeads);
  override(config->ffn, ffn);
  if (ropeTheta.getNumOccurrences())
    config->ropeTheta = ropeTheta;
  override(config->seq, seq);
  override(config->vocab, vocab);
  override(config->vocab, classes);
  override(config->image, image);
  override(config->batch, batch);
  if (dtype.getNumOccurrences())
    config->dtype = dtype;
  if (untied)
    config->tieEmbeddings = false;

  std::string message;
  if (failed(verifyModelConfig(*config, message))) {
    llvm::errs() << "parc-model: " << message << "\n";
    return 1;
  }

  MLIRContext context;
  // A failing op is named with its location; printing it too would bury
  // the message under the whole function.
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module = buildModel(&context, *config);
  if (failed(verify(*module)))
    return 1;
  // Sizes that fit one by one can still give a tensor beyond 2^62 bytes.
  for (auto func : module->getOps<func::FuncOp>())
    if (failed(checkTensorSizes(func)))
      return 1;

  if (printStats) {
    auto func = *module->getOps<func::FuncOp>().begin();
    printModelStats(computeModelStats(func), llvm::outs());
    if (!outputFile.getNumOccurrences())
      return 0;
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "parc-model: " << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->keep();
  return 0;
}
