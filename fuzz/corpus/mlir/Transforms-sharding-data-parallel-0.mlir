// Batch split over dp, parameters replicated: the forward pass has no
// collective at all when the loss may stay a pending sum over dp.
// RUN: parc-opt %s --parc-propagate-sharding --parc-partition | FileCheck %s
dist.mesh @mesh axes = [dp = 4]
// CHECK-LABEL: func.func @forward
// CHECK-SAME: tensor<2x16xf32>
// CHECK-SAME: tensor<2xi64>
// CHECK-NOT: = dist.
// CHECK: parc.cross_entropy %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
// Each rank's mean covers a quarter of the batch: it scales its part.
// CHECK: parc.constant dense<2.500000e-01>
// CHECK: parc.mul
// CHECK-NOT: = dist.
// CHECK: return
func.func @forward(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x",
                                         dist.sharding = #dist.sharding<@mesh, [[dp], []]>},
                   %y: tensor<8xi64> {parc.role = "label", parc.name = "labels",
                                      parc.init = #parc.init<uniform(0, 4)>,
                                      dist.sharding = #dist.sharding<@mesh, [[dp]]>},
                   %w1: tensor<16x32xf32> {parc.role = "param", parc.name = "fc1.weight"},
                   %w2: tensor<32x4xf32> {parc.role = "param", parc.name = "fc2.weight"})
    -> (tensor<f32> {parc.name = "loss", dist.sharding = #dist.sharding<@mesh, [], partial [dp]>}) {
  %0 = parc.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = parc.relu %0 : tensor<8x32xf32>
  %2 = parc.matmul %1, %w2 : tensor<8x32xf32>, tensor<32x4xf32> -> tensor<8x4xf32>
  %3 = parc.cross_entropy %2, %y : tensor<8x4xf32>, tensor<8xi64> -> tensor<f32>
  return %3 : tensor<f32>
}
