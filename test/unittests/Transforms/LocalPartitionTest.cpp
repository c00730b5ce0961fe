//===- LocalPartitionTest.cpp - what the local algorithms communicate -----===//
//
// The all-reduces a vocab-parallel loss and its gradient run, which the
// planner prices: the log-normalizer's max and sum over the rank's
// positions (and the label's logit in the forward loss), none while the
// classes are whole.
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"

#include "dist/IR/DistDialect.h"
#include "dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::parc;

namespace {

class LocalPartitionTest : public ::testing::Test {
protected:
  LocalPartitionTest() {
    DialectRegistry registry;
    registry.insert<ParcDialect, dist::DistDialect, func::FuncDialect>();
    registerLocalPartitionModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(R"mlir(
      dist.mesh @mesh axes = [dp = 2, tp = 4]
      func.func @loss(%x: tensor<2x3x8xf32>, %y: tensor<2x3xi64>,
                      %g: tensor<f32>) -> (tensor<f32>, tensor<2x3x8xf32>) {
        %0 = parc.cross_entropy %x, %y : tensor<2x3x8xf32>, tensor<2x3xi64> -> tensor<f32>
        %1 = parc.cross_entropy_grad %x, %y, %g count = 6 : tensor<2x3x8xf32>, tensor<2x3xi64>, tensor<f32>
        return %0, %1 : tensor<f32>, tensor<2x3x8xf32>
      })mlir",
                                         &context);
    mesh = *module->getOps<dist::MeshOp>().begin();
    tp = StringAttr::get(&context, "tp");
    dp = StringAttr::get(&context, "dp");
  }

  /// The all-reduce buffers of the op `index` of @loss with its batch
  /// (factor 0) over `batchAxes` and its classes (factor 2) over
  /// `classAxes`.
  SmallVector<int64_t> getBytes(int index, AxisList batchAxes,
                                AxisList classAxes) {
    auto func = *module->getOps<func::FuncOp>().begin();
    Operation *op = &*std::next(func.getBody().front().begin(), index);
    FactorAxes factors(3);
    factors[0] = batchAxes;
    factors[2] = classAxes;
    return cast<LocalPartitionOpInterface>(op).getLocalAllReduceBytes(factors,
                                                                      mesh);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  dist::MeshOp mesh;
  StringAttr tp, dp;
};

TEST_F(LocalPartitionTest, VocabParallelLossAllReducesPerPosition) {
  // 6 positions of f32: max, sum, the label's logit.
  EXPECT_EQ(getBytes(0, {}, {tp}), (SmallVector<int64_t>{24, 24, 24}));
  // Half the batch on each dp rank: half the positions.
  EXPECT_EQ(getBytes(0, {dp}, {tp}), (SmallVector<int64_t>{12, 12, 12}));
  // The gradient reads the loss's normalizer and reduces nothing itself.
  EXPECT_TRUE(getBytes(1, {}, {tp}).empty());
}

TEST_F(LocalPartitionTest, WholeClassesNeedNoAllReduce) {
  EXPECT_TRUE(getBytes(0, {dp}, {}).empty());
  EXPECT_TRUE(getBytes(1, {dp}, {}).empty());
}

} // namespace
