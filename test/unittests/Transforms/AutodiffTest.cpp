//===- AutodiffTest.cpp - every gradient rule against finite differences --===//
//
// For each op, loss = reduce_sum(op(params...) * r) with a fixed random r;
// --parc-autodiff's gradients, evaluated in f64, must match central
// differences of the loss to a relative error of 1e-6 (max-norm).
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Interp/EvaluableOpInterface.h"
#include "parc/Interp/Evaluator.h"
#include "parc/Transforms/Passes.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

namespace {

struct Argument {
  std::string declaration; // e.g. "tensor<2x3xf32>"
  std::vector<int64_t> shape;
  bool param;
  bool integer = false;
  double low = -1, high = 1; // uniform range of the values
};

class AutodiffTest : public ::testing::Test {
protected:
  AutodiffTest() {
    DialectRegistry registry;
    registry.insert<ParcDialect, func::FuncDialect>();
    registerEvaluableOpInterfaceModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Checks the gradients of `body` (which defines %y from %a0, %a1, ...)
  /// with respect to every param argument; with `lowering`, also that the
  /// gradient function it rewrites computes the same gradients.
  void check(ArrayRef<Argument> arguments, StringRef body, StringRef resultType,
             std::function<void(OpPassManager &)> lowering = {}) {
    std::mt19937 random(42);
    std::string source = "func.func @forward(";
    SmallVector<Tensor> values;
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      source += "%a" + std::to_string(index) + ": " + argument.declaration +
                " {parc.role = \"" + (argument.param ? "param" : "input") +
                "\", parc.name = \"a" + std::to_string(index) + "\"}, ";
      Tensor tensor(argument.shape);
      std::uniform_real_distribution<double> uniform(argument.low,
                                                     argument.high);
      for (double &value : tensor.values)
        value = argument.integer ? std::floor(uniform(random)) : uniform(random);
      values.push_back(tensor);
    }
    // The weights of the loss: a fixed random tensor like the result.
    auto resultShape = parseShape(resultType);
    Tensor weights(resultShape);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (double &value : weights.values)
      value = uniform(random);
    values.push_back(weights);
    std::string allAxes;
    for (size_t dim = 0; dim < resultShape.size(); ++dim)
      allAxes += (dim ? ", " : "") + std::to_string(dim);
    source += "%r: " + resultType.str() +
              " {parc.role = \"input\", parc.name = \"r\"}) -> tensor<f32> {\n" +
              body.str() + "\n  %w = parc.mul %y, %r : " + resultType.str() +
              ", " + resultType.str() + " -> " + resultType.str() +
              "\n  %loss = parc.reduce_sum %w [" + allAxes + "] : " +
              resultType.str() +
              " -> tensor<f32>\n  return %loss : tensor<f32>\n}\n";

    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
    ASSERT_TRUE(module) << source;
    OwningOpRef<ModuleOp> original = module->clone();
    PassManager pm(&context);
    pm.addNestedPass<func::FuncOp>(createAutodiffPass());
    ASSERT_TRUE(succeeded(pm.run(*module))) << source;

    auto func = *module->getOps<func::FuncOp>().begin();
    auto forward = *original->getOps<func::FuncOp>().begin();
    FailureOr<SmallVector<Tensor>> results =
        evaluateFunction(func, values, Precision::F64);
    ASSERT_TRUE(succeeded(results));
    if (lowering) {
      OwningOpRef<ModuleOp> lowered = module->clone();
      PassManager lowerings(&context);
      lowering(lowerings);
      ASSERT_TRUE(succeeded(lowerings.run(*lowered)));
      FailureOr<SmallVector<Tensor>> loweredResults = evaluateFunction(
          *lowered->getOps<func::FuncOp>().begin(), values, Precision::F64);
      ASSERT_TRUE(succeeded(loweredResults));
      for (auto [fused, written] : llvm::zip_equal(*results, *loweredResults))
        for (auto [a, b] : llvm::zip_equal(fused.values, written.values))
          EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::abs(a))) << source;
    }
    auto loss = [&](ArrayRef<Tensor> inputs) {
      return evaluateFunction(forward, inputs, Precision::F64)
          ->front()
          .values[0];
    };

    unsigned next = 1;
    for (auto [index, argument] : llvm::enumerate(arguments)) {
      if (!argument.param)
        continue;
      const Tensor &gradient = (*results)[next++];
      double worst = 0, scale = 1e-12;
      for (size_t i = 0; i < values[index].values.size(); ++i) {
        SmallVector<Tensor> shifted(values);
        double epsilon = 1e-6;
        shifted[index].values[i] += epsilon;
        double up = loss(shifted);
        shifted[index].values[i] -= 2 * epsilon;
        double down = loss(shifted);
        double numeric = (up - down) / (2 * epsilon);
        worst = std::max(worst, std::abs(numeric - gradient.values[i]));
        scale = std::max(scale, std::abs(numeric));
      }
      EXPECT_LE(worst / scale, 1e-6)
          << "argument a" << index << " of\n" << source;
    }
  }

  static std::vector<int64_t> parseShape(StringRef type) {
    std::vector<int64_t> shape;
    StringRef dims = type.drop_front(strlen("tensor<")).drop_back();
    SmallVector<StringRef> parts;
    dims.split(parts, 'x');
    for (StringRef part : ArrayRef<StringRef>(parts).drop_back())
      shape.push_back(std::stoll(part.str()));
    return shape;
  }

  MLIRContext context;
};

Argument param(StringRef type, std::vector<int64_t> shape, double low = -1,
               double high = 1) {
  return {type.str(), std::move(shape), true, false, low, high};
}
Argument ids(StringRef type, std::vector<int64_t> shape, double high) {
  return {type.str(), std::move(shape), false, true, 0, high};
}

TEST_F(AutodiffTest, BroadcastingArithmetic) {
  check({param("tensor<2x3xf32>", {2, 3}), param("tensor<3xf32>", {3})},
        "  %y = parc.add %a0, %a1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>",
        "tensor<2x3xf32>");
  check({param("tensor<2x3xf32>", {2, 3}), param("tensor<2x1xf32>", {2, 1})},
        "  %y = parc.sub %a0, %a1 : tensor<2x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>",
        "tensor<2x3xf32>");
  check({param("tensor<1x3xf32>", {1, 3}), param("tensor<2x1xf32>", {2, 1})},
        "  %y = parc.mul %a0, %a1 : tensor<1x3xf32>, tensor<2x1xf32> -> tensor<2x3xf32>",
        "tensor<2x3xf32>");
  check({param("tensor<2x3xf32>", {2, 3}), param("tensor<3xf32>", {3}, 0.5, 1.5)},
        "  %y = parc.div %a0, %a1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>",
        "tensor<2x3xf32>");
}

TEST_F(AutodiffTest, UnaryOps) {
  for (StringRef op : {"neg", "exp", "tanh", "relu", "sigmoid", "silu",
                       "gelu erf", "gelu tanh"})
    check({param("tensor<2x4xf32>", {2, 4})},
          ("  %y = parc." + op + " %a0 : tensor<2x4xf32>").str(),
          "tensor<2x4xf32>");
  check({param("tensor<2x4xf32>", {2, 4}, 0.5, 2)},
        "  %y = parc.log %a0 : tensor<2x4xf32>", "tensor<2x4xf32>");
}

TEST_F(AutodiffTest, MatmulWithTransposesAndBatchBroadcast) {
  check({param("tensor<2x3x4xf32>", {2, 3, 4}), param("tensor<4x5xf32>", {4, 5})},
        "  %y = parc.matmul %a0, %a1 : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<2x3x5xf32>",
        "tensor<2x3x5xf32>");
  check({param("tensor<4x3xf32>", {4, 3}), param("tensor<4x5xf32>", {4, 5})},
        "  %y = parc.matmul %a0, %a1 transpose_lhs : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>",
        "tensor<3x5xf32>");
  check({param("tensor<3x4xf32>", {3, 4}), param("tensor<5x4xf32>", {5, 4})},
        "  %y = parc.matmul %a0, %a1 transpose_rhs : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<3x5xf32>",
        "tensor<3x5xf32>");
  check({param("tensor<4x3xf32>", {4, 3}), param("tensor<5x4xf32>", {5, 4})},
        "  %y = parc.matmul %a0, %a1 transpose_lhs transpose_rhs : tensor<4x3xf32>, tensor<5x4xf32> -> tensor<3x5xf32>",
        "tensor<3x5xf32>");
  // A weight shared by the batch takes its gradient summed over the batch
  // in the product (contract_batch), in each transpose form; an lhs shared
  // by rhs batches likewise.
  check(
      {param("tensor<2x3x4xf32>", {2, 3, 4}), param("tensor<5x4xf32>", {5, 4})},
      "  %y = parc.matmul %a0, %a1 transpose_rhs : tensor<2x3x4xf32>, "
      "tensor<5x4xf32> -> tensor<2x3x5xf32>",
      "tensor<2x3x5xf32>");
  check(
      {param("tensor<2x4x3xf32>", {2, 4, 3}), param("tensor<4x5xf32>", {4, 5})},
      "  %y = parc.matmul %a0, %a1 transpose_lhs : tensor<2x4x3xf32>, "
      "tensor<4x5xf32> -> tensor<2x3x5xf32>",
      "tensor<2x3x5xf32>");
  check(
      {param("tensor<3x4xf32>", {3, 4}), param("tensor<2x5x4xf32>", {2, 5, 4})},
      "  %y = parc.matmul %a0, %a1 transpose_rhs : tensor<3x4xf32>, "
      "tensor<2x5x4xf32> -> tensor<2x3x5xf32>",
      "tensor<2x3x5xf32>");
  check(
      {param("tensor<4x3xf32>", {4, 3}), param("tensor<2x4x5xf32>", {2, 4, 5})},
      "  %y = parc.matmul %a0, %a1 transpose_lhs : tensor<4x3xf32>, "
      "tensor<2x4x5xf32> -> tensor<2x3x5xf32>",
      "tensor<2x3x5xf32>");
  // The contract_batch form itself: its gradient broadcasts over the batch.
  check({param("tensor<2x4x3xf32>", {2, 4, 3}),
         param("tensor<2x4x5xf32>", {2, 4, 5})},
        "  %y = parc.matmul %a0, %a1 transpose_lhs contract_batch : "
        "tensor<2x4x3xf32>, tensor<2x4x5xf32> -> tensor<3x5xf32>",
        "tensor<3x5xf32>");
  // Batches broadcast over several dimensions: [b, 1, 1, s, h] x
  // [3, H, h, d].
  check({param("tensor<2x1x1x3x4xf32>", {2, 1, 1, 3, 4}),
         param("tensor<3x2x4x2xf32>", {3, 2, 4, 2})},
        "  %y = parc.matmul %a0, %a1 : tensor<2x1x1x3x4xf32>, tensor<3x2x4x2xf32> -> tensor<2x3x2x3x2xf32>",
        "tensor<2x3x2x3x2xf32>");
}

// matrix_dims: m, k and n of two dimensions each, in every transpose form,
// with a batch on the lhs only (the rhs's gradient sums over it in the
// product) and on both.
TEST_F(AutodiffTest, MatmulWithMatrixGroups) {
  std::vector<int64_t> m = {2, 3}, k = {2, 2}, n = {3, 1};
  auto concat = [](std::vector<std::vector<int64_t>> parts) {
    std::vector<int64_t> shape;
    for (const std::vector<int64_t> &part : parts)
      shape.insert(shape.end(), part.begin(), part.end());
    return shape;
  };
  auto type = [](const std::vector<int64_t> &shape) {
    std::string text = "tensor<";
    for (int64_t size : shape)
      text += std::to_string(size) + "x";
    return text + "f32>";
  };
  for (bool transposeLhs : {false, true})
    for (bool transposeRhs : {false, true})
      for (bool rhsBatched : {false, true}) {
        std::vector<int64_t> lhs =
            concat({{2}, transposeLhs ? k : m, transposeLhs ? m : k});
        std::vector<int64_t> rhs = concat({rhsBatched ? std::vector<int64_t>{2}
                                                      : std::vector<int64_t>{},
                                           transposeRhs ? n : k,
                                           transposeRhs ? k : n});
        std::vector<int64_t> result = concat({{2}, m, n});
        std::string op = "  %y = parc.matmul %a0, %a1";
        if (transposeLhs)
          op += " transpose_lhs";
        if (transposeRhs)
          op += " transpose_rhs";
        op += " matrix_dims [2, 2, 2] : " + type(lhs) + ", " + type(rhs) +
              " -> " + type(result);
        check({param(type(lhs), lhs), param(type(rhs), rhs)}, op,
              type(result));
      }
  // GPT's QKV projection, [b, s, h] x [h, 3, H, d], and a weight gradient
  // with grouped columns.
  check({param("tensor<2x3x4xf32>", {2, 3, 4}),
         param("tensor<4x3x2x2xf32>", {4, 3, 2, 2})},
        "  %y = parc.matmul %a0, %a1 matrix_dims [1, 1, 3] : "
        "tensor<2x3x4xf32>, tensor<4x3x2x2xf32> -> tensor<2x3x3x2x2xf32>",
        "tensor<2x3x3x2x2xf32>");
  check({param("tensor<2x3x4xf32>", {2, 3, 4}),
         param("tensor<2x3x3x2xf32>", {2, 3, 3, 2})},
        "  %y = parc.matmul %a0, %a1 transpose_lhs contract_batch matrix_dims "
        "[1, 1, 2] : tensor<2x3x4xf32>, tensor<2x3x3x2xf32> -> "
        "tensor<4x3x2xf32>",
        "tensor<4x3x2xf32>");
}

TEST_F(AutodiffTest, Normalization) {
  check({param("tensor<2x5xf32>", {2, 5})},
        "  %y = parc.softmax %a0 axis = 1 : tensor<2x5xf32>", "tensor<2x5xf32>");
  check({param("tensor<3x4xf32>", {3, 4})},
        "  %y = parc.softmax %a0 axis = 0 : tensor<3x4xf32>", "tensor<3x4xf32>");
  check({param("tensor<3x4xf32>", {3, 4}), param("tensor<4xf32>", {4}),
         param("tensor<4xf32>", {4})},
        "  %y = parc.layer_norm %a0, %a1, %a2 eps = 1.0e-5 : tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>",
        "tensor<3x4xf32>");
  check({param("tensor<3x4xf32>", {3, 4}), param("tensor<4xf32>", {4})},
        "  %y = parc.rms_norm %a0, %a1 eps = 1.0e-6 : tensor<3x4xf32>, tensor<4xf32>",
        "tensor<3x4xf32>");
}

// Per group of the batch (here 2 of 2 images) or the whole batch; the
// lowered form (parc ops, groups as a leading dimension) computes the same.
TEST_F(AutodiffTest, BatchNorm) {
  for (int groups : {1, 2})
    check({param("tensor<4x3x2x3xf32>", {4, 3, 2, 3}),
           param("tensor<3xf32>", {3}, 0.5, 1.5), param("tensor<3xf32>", {3})},
          "  %y, %mean, %variance = parc.batch_norm %a0, %a1, %a2 eps = "
          "1.0e-5 groups = " +
              std::to_string(groups) + " : tensor<4x3x2x3xf32>, tensor<3xf32>",
          "tensor<4x3x2x3xf32>", [](OpPassManager &pm) {
            pm.addNestedPass<func::FuncOp>(createLowerBatchNormPass());
          });
}

TEST_F(AutodiffTest, Convolution) {
  // Strided, padded unevenly, dilated and grouped: every index of the
  // geometry moves a tap.
  check({param("tensor<2x4x7x6xf32>", {2, 4, 7, 6}),
         param("tensor<6x2x3x2xf32>", {6, 2, 3, 2})},
        "  %y = parc.conv2d %a0, %a1 strides [2, 1] padding [1, 0, 2, 1] "
        "dilations [2, 2] groups 2 : tensor<2x4x7x6xf32>, tensor<6x2x3x2xf32>",
        "tensor<2x6x3x5xf32>");
  check({param("tensor<1x3x5x5xf32>", {1, 3, 5, 5}),
         param("tensor<2x3x3x3xf32>", {2, 3, 3, 3})},
        "  %y = parc.conv2d %a0, %a1 strides [2, 2] padding [1, 1, 1, 1] "
        "dilations [1, 1] groups 1 : tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32>",
        "tensor<1x2x3x3xf32>");
}

TEST_F(AutodiffTest, Pooling) {
  // Random values have no ties, so each window's maximum is unique and the
  // loss is differentiable there.
  check({param("tensor<2x3x7x6xf32>", {2, 3, 7, 6})},
        "  %y = parc.max_pool2d %a0 kernel [3, 2] strides [2, 1] padding "
        "[1, 0, 1, 1] dilations [1, 2] : tensor<2x3x7x6xf32>",
        "tensor<2x3x4x5xf32>");
  for (const char *countPadding : {"", " count_include_pad"})
    check({param("tensor<2x3x7x6xf32>", {2, 3, 7, 6})},
          std::string("  %y = parc.avg_pool2d %a0 kernel [3, 3] strides [2, 2] "
                      "padding [1, 0, 1, 1] dilations [1, 1]") +
              countPadding + " : tensor<2x3x7x6xf32>",
          "tensor<2x3x4x3xf32>");
}

TEST_F(AutodiffTest, EmbeddingAndLoss) {
  check({param("tensor<7x3xf32>", {7, 3}), ids("tensor<2x4xi64>", {2, 4}, 7)},
        "  %y = parc.embedding %a0, %a1 : tensor<7x3xf32>, tensor<2x4xi64> -> tensor<2x4x3xf32>",
        "tensor<2x4x3xf32>");
  check({param("tensor<3x5xf32>", {3, 5}), ids("tensor<3xi64>", {3}, 5)},
        "  %y = parc.cross_entropy %a0, %a1 : tensor<3x5xf32>, tensor<3xi64> -> tensor<f32>",
        "tensor<f32>");
}

TEST_F(AutodiffTest, Layout) {
  check({param("tensor<2x6xf32>", {2, 6})},
        "  %y = parc.reshape %a0 : tensor<2x6xf32> -> tensor<3x4xf32>",
        "tensor<3x4xf32>");
  check({param("tensor<2x3x4xf32>", {2, 3, 4})},
        "  %y = parc.transpose %a0 [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>",
        "tensor<4x2x3xf32>");
  check({param("tensor<2x3x4xf32>", {2, 3, 4})},
        "  %y = parc.reduce_sum %a0 [1] keepdims : tensor<2x3x4xf32> -> tensor<2x1x4xf32>",
        "tensor<2x1x4xf32>");
  check({param("tensor<2x3x4xf32>", {2, 3, 4})},
        "  %y = parc.reduce_mean %a0 [0, 2] : tensor<2x3x4xf32> -> tensor<3xf32>",
        "tensor<3xf32>");
  check({param("tensor<2x3x4xf32>", {2, 3, 4})},
        "  %y = parc.reduce_log_sum_exp %a0 [0, 2] : tensor<2x3x4xf32> -> "
        "tensor<3xf32>",
        "tensor<3xf32>");
  check({param("tensor<2x3x4xf32>", {2, 3, 4})},
        "  %y = parc.reduce_log_sum_exp %a0 [2] keepdims : tensor<2x3x4xf32> "
        "-> tensor<2x3x1xf32>",
        "tensor<2x3x1xf32>");
  check({param("tensor<2x3xf32>", {2, 3}), param("tensor<2x2xf32>", {2, 2})},
        "  %y = parc.concat %a0, %a1 axis = 1 : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x5xf32>",
        "tensor<2x5xf32>");
  check({param("tensor<4x7xf32>", {4, 7})},
        "  %y = parc.slice %a0 offsets [1, 1] sizes [2, 3] strides [1, 2] : tensor<4x7xf32> -> tensor<2x3xf32>",
        "tensor<2x3xf32>");
  check({param("tensor<3xf32>", {3})},
        "  %y = parc.broadcast_to %a0 : tensor<3xf32> -> tensor<2x3xf32>",
        "tensor<2x3xf32>");
}

TEST_F(AutodiffTest, Attention) {
  for (StringRef causal : {"causal", ""})
    check({param("tensor<1x2x3x4xf32>", {1, 2, 3, 4}),
           param("tensor<1x2x5x4xf32>", {1, 2, 5, 4}),
           param("tensor<1x2x5x3xf32>", {1, 2, 5, 3})},
          ("  %y = parc.attention %a0, %a1, %a2 " + causal +
           " scale = 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>, "
           "tensor<1x2x5x3xf32>")
              .str(),
          "tensor<1x2x3x3xf32>");
}

TEST_F(AutodiffTest, GradientsAreSummedOverUses) {
  check({param("tensor<3xf32>", {3})},
        "  %t = parc.mul %a0, %a0 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>\n"
        "  %y = parc.add %t, %a0 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>",
        "tensor<3xf32>");
}

} // namespace
