//===- ModelEvaluationTest.cpp - generated models under the evaluator -----===//

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Interp/EvaluableOpInterface.h"
#include "parc/Interp/Evaluator.h"
#include "parc/Interp/ModelData.h"
#include "parc/Models/Models.h"

#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

namespace {

class ModelEvaluationTest : public ::testing::Test {
protected:
  ModelEvaluationTest() {
    DialectRegistry registry;
    registry.insert<ParcDialect, func::FuncDialect>();
    registerEvaluableOpInterfaceModels(registry);
    context.appendDialectRegistry(registry);
  }

  /// The loss of `preset` at its deterministic initialization.
  double loss(StringRef preset, Precision precision, uint64_t seed = 0) {
    std::optional<ModelConfig> config = getModelPreset(preset);
    EXPECT_TRUE(config.has_value());
    OwningOpRef<ModuleOp> module = buildModel(&context, *config);
    EXPECT_TRUE(succeeded(verify(*module)));
    auto func = *module->getOps<func::FuncOp>().begin();
    FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
    EXPECT_TRUE(succeeded(arguments));
    llvm::Expected<SmallVector<Tensor>> values =
        prepareArguments(*arguments, {}, seed);
    EXPECT_TRUE(static_cast<bool>(values));
    FailureOr<SmallVector<Tensor>> results =
        evaluateFunction(func, *values, precision);
    EXPECT_TRUE(succeeded(results));
    return results->front().values.front();
  }

  MLIRContext context;
};

TEST_F(ModelEvaluationTest, GptTinyStartsNearUniformLoss) {
  double expected = std::log(double(getModelPreset("gpt-tiny")->vocab));
  double value = loss("gpt-tiny", Precision::Stored);
  EXPECT_NEAR(value, expected, 0.02 * expected);
}

TEST_F(ModelEvaluationTest, GptTinyIsDeterministic) {
  EXPECT_EQ(loss("gpt-tiny", Precision::Stored),
            loss("gpt-tiny", Precision::Stored));
  EXPECT_NE(loss("gpt-tiny", Precision::Stored, 0),
            loss("gpt-tiny", Precision::Stored, 1));
}

TEST_F(ModelEvaluationTest, GptTinyAgreesInF32AndF64) {
  double f32 = loss("gpt-tiny", Precision::Stored);
  double f64 = loss("gpt-tiny", Precision::F64);
  EXPECT_NEAR(f32, f64, 1e-5 * std::abs(f64));
}

TEST_F(ModelEvaluationTest, MlpTinyStartsNearUniformLoss) {
  // Unit-variance inputs through 0.02-std weights give near-zero logits.
  double expected = std::log(double(getModelPreset("mlp-tiny")->vocab));
  EXPECT_NEAR(loss("mlp-tiny", Precision::F64), expected, 0.02 * expected);
}

TEST_F(ModelEvaluationTest, GivenTensorsReplaceInitialization) {
  ModelConfig config = *getModelPreset("mlp-tiny");
  OwningOpRef<ModuleOp> module = buildModel(&context, config);
  auto func = *module->getOps<func::FuncOp>().begin();
  auto arguments = readModelArguments(func);
  ASSERT_TRUE(succeeded(arguments));
  // Zero weights make every logit equal: loss is exactly log(classes).
  llvm::StringMap<Tensor> given;
  for (const ModelArgument &argument : *arguments)
    if (argument.role == ArgumentRole::Param)
      given[argument.name] = Tensor(argument.type.getShape());
  auto values = prepareArguments(*arguments, given, 0);
  ASSERT_TRUE(static_cast<bool>(values));
  auto results = evaluateFunction(func, *values, Precision::F64);
  ASSERT_TRUE(succeeded(results));
  EXPECT_NEAR(results->front().values[0], std::log(double(config.vocab)),
              1e-12);
}

TEST_F(ModelEvaluationTest, GivenTensorOfWrongShapeIsNamed) {
  OwningOpRef<ModuleOp> module =
      buildModel(&context, *getModelPreset("mlp-tiny"));
  auto func = *module->getOps<func::FuncOp>().begin();
  auto arguments = readModelArguments(func);
  ASSERT_TRUE(succeeded(arguments));
  llvm::StringMap<Tensor> given;
  given["fc1.weight"] = Tensor({3, 3});
  auto values = prepareArguments(*arguments, given, 0);
  ASSERT_FALSE(static_cast<bool>(values));
  std::string message = llvm::toString(values.takeError());
  EXPECT_NE(message.find("'fc1.weight' has shape [3, 3]"), std::string::npos)
      << message;
}

} // namespace
