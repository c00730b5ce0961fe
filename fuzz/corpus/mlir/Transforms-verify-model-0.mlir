// RUN: parc-opt %s -split-input-file -parc-verify-model -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @model
func.func @model(%w: tensor<4x2xf32> {parc.role = "param", parc.name = "fc1.weight"},
                 %x: tensor<3x4xf32> {parc.role = "input", parc.name = "x"},
                 %y: tensor<3xi64> {parc.role = "label", parc.name = "labels", parc.init = #parc.init<uniform(0, 2)>})
    -> (tensor<f32> {parc.name = "loss"}) {
  %0 = parc.matmul %x, %w : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
  %1 = parc.cross_entropy %0, %y : tensor<3x2xf32>, tensor<3xi64> -> tensor<f32>
  return %1 : tensor<f32>
}
