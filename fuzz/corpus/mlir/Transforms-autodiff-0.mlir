// RUN: parc-opt %s -split-input-file --parc-autodiff -verify-diagnostics | FileCheck %s

// The gradient of every param follows the loss; inputs and labels get none.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: -> (tensor<f32> {parc.name = "loss"}, tensor<16x4xf32> {parc.name = "w.grad"})
// CHECK: %[[LOGITS:.*]] = parc.matmul %arg0, %arg1
// CHECK: %[[LOSS:.*]] = parc.cross_entropy %[[LOGITS]], %arg2
// CHECK: %[[DLOGITS:.*]] = parc.cross_entropy_grad %[[LOGITS]], %arg2, %{{.*}} count = 8
// CHECK: %[[DW:.*]] = parc.matmul %arg0, %[[DLOGITS]] transpose_lhs
// CHECK: return %[[LOSS]], %[[DW]]
func.func @mlp(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
               %w: tensor<16x4xf32> {parc.role = "param", parc.name = "w"},
               %y: tensor<8xi64> {parc.role = "label", parc.name = "labels"})
    -> (tensor<f32> {parc.name = "loss"}) {
  %0 = parc.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %1 = parc.cross_entropy %0, %y : tensor<8x4xf32>, tensor<8xi64> -> tensor<f32>
  return %1 : tensor<f32>
}
