//===- EvaluatorTest.cpp - reference kernels against hand-computed values -===//

#include "parc/IR/ParcDialect.h"
#include "parc/Interp/EvaluableOpInterface.h"
#include "parc/Interp/Evaluator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

namespace {

class EvaluatorTest : public ::testing::Test {
protected:
  EvaluatorTest() {
    DialectRegistry registry;
    registry.insert<ParcDialect, func::FuncDialect>();
    registerEvaluableOpInterfaceModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source` (one func @f) and evaluates it in f64 on `arguments`.
  /// Diagnostics are collected into `diagnostics`.
  FailureOr<SmallVector<Tensor>> run(StringRef source,
                                     ArrayRef<Tensor> arguments) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    auto func = module->lookupSymbol<func::FuncOp>("f");
    return evaluateFunction(func, arguments, Precision::F64);
  }

  /// Evaluates a single-result function and returns its values.
  std::vector<double> values(StringRef source, ArrayRef<Tensor> arguments) {
    FailureOr<SmallVector<Tensor>> results = run(source, arguments);
    EXPECT_TRUE(succeeded(results)) << diagnostics;
    if (failed(results))
      return {};
    return results->front().values;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
};

void expectNear(const std::vector<double> &actual,
                const std::vector<double> &expected, double tolerance = 1e-12) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

TEST_F(EvaluatorTest, AddBroadcastsTheRowVector) {
  auto result = values(R"mlir(
    func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = parc.add %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
                       {Tensor({2, 3}, {1, 2, 3, 4, 5, 6}),
                        Tensor({3}, {10, 20, 30})});
  expectNear(result, {11, 22, 33, 14, 25, 36});
}

TEST_F(EvaluatorTest, SubBroadcastsBothOperands) {
  // [2,1] - [1,3] -> [2,3]
  auto result = values(R"mlir(
    func.func @f(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
      %0 = parc.sub %a, %b : tensor<2x1xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
                       {Tensor({2, 1}, {10, 20}), Tensor({1, 3}, {1, 2, 3})});
  expectNear(result, {9, 8, 7, 19, 18, 17});
}

TEST_F(EvaluatorTest, MulAndDivElementwise) {
  auto result = values(R"mlir(
    func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
      %0 = parc.mul %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      %1 = parc.div %0, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      %2 = parc.mul %1, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      return %2 : tensor<3xf32>
    })mlir",
                       {Tensor({3}, {1, -2, 3}), Tensor({3}, {4, 5, -0.5})});
  expectNear(result, {4, -10, -1.5});
}

TEST_F(EvaluatorTest, MatmulWithTransposedBroadcastWeight) {
  // lhs [2, 1, 2] (batch 2), rhs [3, 2] used transposed as [2, 3].
  auto result = values(R"mlir(
    func.func @f(%a: tensor<2x1x2xf32>, %w: tensor<3x2xf32>) -> tensor<2x1x3xf32> {
      %0 = parc.matmul %a, %w transpose_rhs : tensor<2x1x2xf32>, tensor<3x2xf32> -> tensor<2x1x3xf32>
      return %0 : tensor<2x1x3xf32>
    })mlir",
                       {Tensor({2, 1, 2}, {1, 2, 3, 4}),
                        Tensor({3, 2}, {1, 0, 0, 1, 1, 1})});
  expectNear(result, {1, 2, 3, 3, 4, 7});
}

TEST_F(EvaluatorTest, MatmulWithTransposedLhs) {
  // lhs^T = [[1, 3], [2, 4]]; times [[1], [1]] = [[4], [6]].
  auto result = values(R"mlir(
    func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x1xf32>) -> tensor<2x1xf32> {
      %0 = parc.matmul %a, %b transpose_lhs : tensor<2x2xf32>, tensor<2x1xf32> -> tensor<2x1xf32>
      return %0 : tensor<2x1xf32>
    })mlir",
                       {Tensor({2, 2}, {1, 2, 3, 4}), Tensor({2, 1}, {1, 1})});
  expectNear(result, {4, 6});
}

TEST_F(EvaluatorTest, MatmulContractingBatch) {
  // a0^T b0 = [-2, -2] and a1^T b1 = [31, 36], summed.
  auto result = values(R"mlir(
    func.func @f(%a: tensor<2x2x2xf32>, %b: tensor<2x2x1xf32>) -> tensor<2x1xf32> {
      %0 = parc.matmul %a, %b transpose_lhs contract_batch : tensor<2x2x2xf32>, tensor<2x2x1xf32> -> tensor<2x1xf32>
      return %0 : tensor<2x1xf32>
    })mlir",
                       {Tensor({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                        Tensor({2, 2, 1}, {1, -1, 2, 3})});
  expectNear(result, {29, 34});
}

TEST_F(EvaluatorTest, Conv2dPadsTopAndLeftOnly) {
  // The weight takes x[i][j] - x[i+1][j+1] over the input padded by one row
  // above and one column left: the first row and column see zeros.
  auto result = values(R"mlir(
    func.func @f(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32> {
      %0 = parc.conv2d %x, %w strides [1, 1] padding [1, 1, 0, 0] dilations [1, 1] groups 1 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>
      return %0 : tensor<1x1x3x3xf32>
    })mlir",
                       {Tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                        Tensor({1, 1, 2, 2}, {1, 0, 0, -1})});
  expectNear(result, {-1, -2, -3, -4, -4, -4, -7, -4, -4});
}

TEST_F(EvaluatorTest, Conv2dGroupsStridesAndDilations) {
  // Two groups of one channel, stride 2: each filter scales the corners of
  // its own channel.
  auto grouped = values(R"mlir(
    func.func @f(%x: tensor<1x2x3x3xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32> {
      %0 = parc.conv2d %x, %w strides [2, 2] padding [0, 0, 0, 0] dilations [1, 1] groups 2 : tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>
      return %0 : tensor<1x2x2x2xf32>
    })mlir",
                        {Tensor({1, 2, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                               11, 12, 13, 14, 15, 16, 17, 18}),
                         Tensor({2, 1, 1, 1}, {2, 3})});
  expectNear(grouped, {2, 6, 14, 18, 30, 36, 48, 54});
  // Two taps two columns apart: each row's first plus last element.
  auto dilated = values(R"mlir(
    func.func @f(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x1x2xf32>) -> tensor<1x1x3x1xf32> {
      %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 2] groups 1 : tensor<1x1x3x3xf32>, tensor<1x1x1x2xf32>
      return %0 : tensor<1x1x3x1xf32>
    })mlir",
                        {Tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                         Tensor({1, 1, 1, 2}, {1, 1})});
  expectNear(dilated, {4, 10, 16});
}

TEST_F(EvaluatorTest, Poolings) {
  // 2x2 windows, stride 1, one padded row above: the top windows see one
  // input row; averages divide by the window's 4 or by its input elements.
  Tensor x({1, 1, 2, 3}, {1, 5, 2, 4, 3, 6});
  auto max = values(R"mlir(
    func.func @f(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x2x2xf32> {
      %0 = parc.max_pool2d %x kernel [2, 2] strides [1, 1] padding [1, 0, 0, 0] dilations [1, 1] : tensor<1x1x2x3xf32>
      return %0 : tensor<1x1x2x2xf32>
    })mlir",
                    {x});
  expectNear(max, {5, 5, 5, 6});
  auto mean = values(R"mlir(
    func.func @f(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x2x2xf32> {
      %0 = parc.avg_pool2d %x kernel [2, 2] strides [1, 1] padding [1, 0, 0, 0] dilations [1, 1] : tensor<1x1x2x3xf32>
      return %0 : tensor<1x1x2x2xf32>
    })mlir",
                     {x});
  expectNear(mean, {3, 3.5, 3.25, 4});
  auto padded = values(R"mlir(
    func.func @f(%x: tensor<1x1x2x3xf32>) -> tensor<1x1x2x2xf32> {
      %0 = parc.avg_pool2d %x kernel [2, 2] strides [1, 1] padding [1, 0, 0, 0] dilations [1, 1] count_include_pad : tensor<1x1x2x3xf32>
      return %0 : tensor<1x1x2x2xf32>
    })mlir",
                       {x});
  expectNear(padded, {1.5, 1.75, 3.25, 4});
  // Tied maxima: the gradient goes to the first in the window.
  auto tied =
      values(R"mlir(
    func.func @f(%x: tensor<1x1x2x2xf32>, %g: tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> {
      %0 = parc.max_pool2d_grad %x, %g kernel [2, 2] strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>
      return %0 : tensor<1x1x2x2xf32>
    })mlir",
             {Tensor({1, 1, 2, 2}, {1, 3, 3, 2}), Tensor({1, 1, 1, 1}, {7})});
  expectNear(tied, {0, 7, 0, 0});
}

TEST_F(EvaluatorTest, Activations) {
  auto run1 = [&](StringRef op) {
    std::string source = R"mlir(
      func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
        %0 = parc.)mlir" + op.str() +
                         R"mlir( %x : tensor<3xf32>
        return %0 : tensor<3xf32>
      })mlir";
    return values(source, {Tensor({3}, {-1, 0, 1})});
  };
  double s1 = 1 / (1 + std::exp(-1.0)), sm1 = 1 / (1 + std::exp(1.0));
  expectNear(run1("relu"), {0, 0, 1});
  expectNear(run1("neg"), {1, -0.0, -1});
  expectNear(run1("exp"), {std::exp(-1.0), 1, std::exp(1.0)});
  expectNear(run1("tanh"), {std::tanh(-1.0), 0, std::tanh(1.0)});
  expectNear(run1("sigmoid"), {sm1, 0.5, s1});
  expectNear(run1("silu"), {-sm1, 0, s1});
  // Reference values of GELU at +-1 from the closed forms.
  expectNear(run1("gelu erf"),
             {-0.15865525393145707, 0, 0.8413447460685429}, 1e-12);
  expectNear(run1("gelu tanh"),
             {-0.15880800939172324, 0, 0.8411919906082768}, 1e-12);
}

TEST_F(EvaluatorTest, SoftmaxIsStableForLargeLogits) {
  auto result = values(R"mlir(
    func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = parc.softmax %x axis = 1 : tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
                       {Tensor({2, 3}, {1000, 1001, 1002, -1000, -1000, -1000})});
  double z = 1 + std::exp(-1.0) + std::exp(-2.0);
  expectNear(result, {std::exp(-2.0) / z, std::exp(-1.0) / z, 1 / z, 1.0 / 3,
                      1.0 / 3, 1.0 / 3});
}

TEST_F(EvaluatorTest, SoftmaxAlongTheFirstAxis) {
  auto result = values(R"mlir(
    func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = parc.softmax %x axis = 0 : tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {Tensor({2, 2}, {0, 5, 0, 5})});
  expectNear(result, {0.5, 0.5, 0.5, 0.5});
}

TEST_F(EvaluatorTest, LayerNormNormalizesTheLastAxis) {
  auto result = values(R"mlir(
    func.func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
      %0 = parc.layer_norm %x, %g, %b eps = 0.0 : tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>
      return %0 : tensor<1x4xf32>
    })mlir",
                       {Tensor({1, 4}, {1, 2, 3, 4}), Tensor({4}, {1, 1, 2, 1}),
                        Tensor({4}, {0, 0, 0, 10})});
  // mean 2.5, biased variance 1.25.
  double r = 1 / std::sqrt(1.25);
  expectNear(result, {-1.5 * r, -0.5 * r, 2 * 0.5 * r, 1.5 * r + 10});
}

TEST_F(EvaluatorTest, RmsNorm) {
  auto result = values(R"mlir(
    func.func @f(%x: tensor<2xf32>, %g: tensor<2xf32>) -> tensor<2xf32> {
      %0 = parc.rms_norm %x, %g eps = 0.0 : tensor<2xf32>, tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir",
                       {Tensor({2}, {3, 4}), Tensor({2}, {1, 2})});
  double rms = std::sqrt(12.5);
  expectNear(result, {3 / rms, 8 / rms});
}

TEST_F(EvaluatorTest, CausalAttentionMasksFutureKeys) {
  // One head, two positions, head_dim 1. Query i sees keys j <= i.
  auto result = values(R"mlir(
    func.func @f(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x2x1xf32>, %v: tensor<1x1x2x1xf32>) -> tensor<1x1x2x1xf32> {
      %0 = parc.attention %q, %k, %v causal scale = 0.5 : tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>
      return %0 : tensor<1x1x2x1xf32>
    })mlir",
                       {Tensor({1, 1, 2, 1}, {1, 2}), Tensor({1, 1, 2, 1}, {1, 3}),
                        Tensor({1, 1, 2, 1}, {10, 20})});
  // Query 1: scores 0.5 * [2*1, 2*3] = [1, 3].
  double w0 = std::exp(1.0), w1 = std::exp(3.0);
  expectNear(result, {10, (10 * w0 + 20 * w1) / (w0 + w1)});
}

TEST_F(EvaluatorTest, NonCausalAttentionSeesAllKeys) {
  auto result = values(R"mlir(
    func.func @f(%q: tensor<1x1x1x1xf32>, %k: tensor<1x1x2x1xf32>, %v: tensor<1x1x2x2xf32>) -> tensor<1x1x1x2xf32> {
      %0 = parc.attention %q, %k, %v scale = 1.0 : tensor<1x1x1x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x2xf32>
      return %0 : tensor<1x1x1x2xf32>
    })mlir",
                       {Tensor({1, 1, 1, 1}, {1}), Tensor({1, 1, 2, 1}, {0, 0}),
                        Tensor({1, 1, 2, 2}, {1, 2, 3, 4})});
  expectNear(result, {2, 3});
}

TEST_F(EvaluatorTest, CrossEntropyIsTheMeanNegativeLogLikelihood) {
  auto result = values(R"mlir(
    func.func @f(%x: tensor<2x2xf32>, %y: tensor<2xi64>) -> tensor<f32> {
      %0 = parc.cross_entropy %x, %y : tensor<2x2xf32>, tensor<2xi64> -> tensor<f32>
      return %0 : tensor<f32>
    })mlir",
                       {Tensor({2, 2}, {0, 0, std::log(3.0), 0}),
                        Tensor({2}, {0, 1})});
  // Row 0: log 2. Row 1: log(3 + 1) - 0.
  expectNear(result, {(std::log(2.0) + std::log(4.0)) / 2});
}

TEST_F(EvaluatorTest, CrossEntropyRejectsAnOutOfRangeLabel) {
  FailureOr<SmallVector<Tensor>> results = run(R"mlir(
    func.func @f(%x: tensor<1x2xf32>, %y: tensor<1xi64>) -> tensor<f32> {
      %0 = parc.cross_entropy %x, %y : tensor<1x2xf32>, tensor<1xi64> -> tensor<f32>
      return %0 : tensor<f32>
    })mlir",
                                               {Tensor({1, 2}, {0, 0}),
                                                Tensor({1}, {2})});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("labels element 0 is 2"), std::string::npos)
      << diagnostics;
}

TEST_F(EvaluatorTest, EmbeddingLooksUpRows) {
  auto result = values(R"mlir(
    func.func @f(%t: tensor<3x2xf32>, %ids: tensor<2x2xi32>) -> tensor<2x2x2xf32> {
      %0 = parc.embedding %t, %ids : tensor<3x2xf32>, tensor<2x2xi32> -> tensor<2x2x2xf32>
      return %0 : tensor<2x2x2xf32>
    })mlir",
                       {Tensor({3, 2}, {0, 1, 10, 11, 20, 21}),
                        Tensor({2, 2}, {2, 0, 1, 1})});
  expectNear(result, {20, 21, 0, 1, 10, 11, 10, 11});
}

TEST_F(EvaluatorTest, EmbeddingRejectsAnIdOutsideTheTable) {
  FailureOr<SmallVector<Tensor>> results = run(R"mlir(
    func.func @f(%t: tensor<3x2xf32>, %ids: tensor<1xi64>) -> tensor<1x2xf32> {
      %0 = parc.embedding %t, %ids : tensor<3x2xf32>, tensor<1xi64> -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    })mlir",
                                               {Tensor({3, 2}), Tensor({1}, {-1})});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("outside the table's rows [0, 3)"),
            std::string::npos)
      << diagnostics;
}

TEST_F(EvaluatorTest, ReshapeTransposeSliceConcat) {
  // [0..5] as 2x3, transposed to 3x2, rows 1.. with stride 1, joined with
  // itself along axis 1.
  auto result = values(R"mlir(
    func.func @f(%x: tensor<6xf32>) -> tensor<2x4xf32> {
      %0 = parc.reshape %x : tensor<6xf32> -> tensor<2x3xf32>
      %1 = parc.transpose %0 [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
      %2 = parc.slice %1 offsets [1, 0] sizes [2, 2] strides [1, 1] : tensor<3x2xf32> -> tensor<2x2xf32>
      %3 = parc.concat %2, %2 axis = 1 : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x4xf32>
      return %3 : tensor<2x4xf32>
    })mlir",
                       {Tensor({6}, {0, 1, 2, 3, 4, 5})});
  // transpose: [[0,3],[1,4],[2,5]]; rows 1..2: [[1,4],[2,5]].
  expectNear(result, {1, 4, 1, 4, 2, 5, 2, 5});
}

TEST_F(EvaluatorTest, StridedSlice) {
  auto result = values(R"mlir(
    func.func @f(%x: tensor<7xf32>) -> tensor<3xf32> {
      %0 = parc.slice %x offsets [1] sizes [3] strides [2] : tensor<7xf32> -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })mlir",
                       {Tensor({7}, {0, 1, 2, 3, 4, 5, 6})});
  expectNear(result, {1, 3, 5});
}

TEST_F(EvaluatorTest, Reductions) {
  auto sum = values(R"mlir(
    func.func @f(%x: tensor<2x3xf32>) -> tensor<2xf32> {
      %0 = parc.reduce_sum %x [1] : tensor<2x3xf32> -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir",
                    {Tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  expectNear(sum, {6, 15});
  auto mean = values(R"mlir(
    func.func @f(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
      %0 = parc.reduce_mean %x [0] keepdims : tensor<2x3xf32> -> tensor<1x3xf32>
      return %0 : tensor<1x3xf32>
    })mlir",
                     {Tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  expectNear(mean, {2.5, 3.5, 4.5});
  auto all = values(R"mlir(
    func.func @f(%x: tensor<2x3xf32>) -> tensor<f32> {
      %0 = parc.reduce_sum %x [0, 1] : tensor<2x3xf32> -> tensor<f32>
      return %0 : tensor<f32>
    })mlir",
                    {Tensor({2, 3}, {1, 2, 3, 4, 5, 6})});
  expectNear(all, {21});
  // Shifted by the maximum: no overflow at 1000; a line of -inf gives -inf.
  auto logSumExp =
      values(R"mlir(
    func.func @f(%x: tensor<3x2xf32>) -> tensor<3xf32> {
      %0 = parc.reduce_log_sum_exp %x [1] : tensor<3x2xf32> -> tensor<3xf32>
      return %0 : tensor<3xf32>
    })mlir",
             {Tensor({3, 2}, {0, 0, 1000, 1000, -INFINITY, -INFINITY})});
  ASSERT_EQ(logSumExp.size(), 3u);
  EXPECT_NEAR(logSumExp[0], std::log(2.0), 1e-12);
  EXPECT_NEAR(logSumExp[1], 1000 + std::log(2.0), 1e-9);
  EXPECT_EQ(logSumExp[2], -INFINITY);
}

TEST_F(EvaluatorTest, Constants) {
  auto result = values(R"mlir(
    func.func @f() -> tensor<3xf32> {
      %0 = parc.constant dense<[1.5, -2.0, 4.0]> : tensor<3xf32>
      %1 = parc.constant dense<2.0> : tensor<3xf32>
      %2 = parc.mul %0, %1 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
      return %2 : tensor<3xf32>
    })mlir",
                       {});
  expectNear(result, {3, -4, 8});
}

TEST_F(EvaluatorTest, StoredPrecisionRoundsEachResultToFloat) {
  module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%a: tensor<1xf32>, %b: tensor<1xf32>) -> tensor<1xf32> {
      %0 = parc.add %a, %b : tensor<1xf32>, tensor<1xf32> -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir",
                                       &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("f");
  // 1 + 2^-30 is not a float: f32 mode rounds it to 1, f64 keeps it.
  SmallVector<Tensor> arguments = {Tensor({1}, {1.0}),
                                   Tensor({1}, {std::ldexp(1.0, -30)})};
  auto f32 = evaluateFunction(func, arguments, Precision::Stored);
  auto f64 = evaluateFunction(func, arguments, Precision::F64);
  ASSERT_TRUE(succeeded(f32) && succeeded(f64));
  EXPECT_EQ(f32->front().values[0], 1.0);
  EXPECT_EQ(f64->front().values[0], 1.0 + std::ldexp(1.0, -30));
}

TEST_F(EvaluatorTest, StoredPrecisionRoundsHalfFloatsToNearestEven) {
  module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%a: tensor<3xbf16>, %b: tensor<3xbf16>, %c: tensor<2xf16>,
                 %d: tensor<2xf16>) -> (tensor<3xbf16>, tensor<2xf16>) {
      %0 = parc.add %a, %b : tensor<3xbf16>, tensor<3xbf16> -> tensor<3xbf16>
      %1 = parc.add %c, %d : tensor<2xf16>, tensor<2xf16> -> tensor<2xf16>
      return %0, %1 : tensor<3xbf16>, tensor<2xf16>
    })mlir",
                                       &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("f");
  // bf16 spacing at 1 is 2^-7: 1 + 2^-8 ties to 1 and 1 + 3 * 2^-8 to
  // 1 + 2^-6 (even), 1 + 2^-8 + 2^-15 rounds up. Arguments are rounded
  // first: 1 + 2^-20 is stored as 1. f16 spacing at 1 is 2^-10.
  auto p = [](double exponent) { return std::ldexp(1.0, exponent); };
  SmallVector<Tensor> arguments = {
      Tensor({3}, {1.0, 1.0, 1.0 + p(-20)}),
      Tensor({3}, {p(-8), 3 * p(-8), p(-8) + p(-15)}), Tensor({2}, {1.0, 1.0}),
      Tensor({2}, {p(-11), 3 * p(-11)})};
  auto stored = evaluateFunction(func, arguments, Precision::Stored);
  ASSERT_TRUE(succeeded(stored));
  EXPECT_EQ((*stored)[0].values,
            (std::vector<double>{1.0, 1.0 + p(-6), 1.0 + p(-7)}));
  EXPECT_EQ((*stored)[1].values, (std::vector<double>{1.0, 1.0 + p(-9)}));
}

} // namespace
