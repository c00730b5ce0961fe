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

// -----

// expected-error @+1 {{autodiff needs a function whose first result is a scalar float loss}}
func.func @no_loss(%w: tensor<4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4xf32> {
  %0 = parc.relu %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @no_rule(%w: tensor<4x3xf32> {parc.role = "param", parc.name = "w"}) -> tensor<f32> {
  // expected-error @+1 {{'parc.reduce_max' op has no gradient rule yet}}
  %0 = parc.reduce_max %w [1] : tensor<4x3xf32> -> tensor<4xf32>
  %1 = parc.reduce_sum %0 [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

func.func @second_order(%x: tensor<4x3xf32> {parc.role = "param", parc.name = "x"},
                        %g: tensor<4x3xf32> {parc.role = "input", parc.name = "g"}) -> tensor<f32> {
  // expected-error @+1 {{'parc.softmax_grad' op has no gradient rule; autodiff cannot differentiate the loss through it}}
  %0 = parc.softmax_grad %x, %g axis = 1 : tensor<4x3xf32>
  %1 = parc.reduce_sum %0 [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A learned additive bias (T5's relative positions) would need the scores'
// gradient, which parc.attention_grad does not produce.
func.func @learned_mask(%q: tensor<1x2x4x8xf32> {parc.role = "param", parc.name = "q"},
                        %bias: tensor<1x2x4x4xf32> {parc.role = "param", parc.name = "bias"}) -> tensor<f32> {
  %m = parc.tanh %bias : tensor<1x2x4x4xf32>
  // expected-error @+1 {{'parc.attention' op has a mask computed from parameters; parc does not differentiate attention's mask}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.5 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
  %1 = parc.reduce_sum %0 [0, 1, 2, 3] : tensor<1x2x4x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
