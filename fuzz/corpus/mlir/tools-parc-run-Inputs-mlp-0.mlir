func.func @forward(%w: tensor<4x3xf32> {parc.role = "param", parc.name = "w"},
                   %x: tensor<2x4xf32> {parc.role = "input", parc.name = "x"},
                   %y: tensor<2xi64> {parc.role = "label", parc.name = "labels", parc.init = #parc.init<uniform(0, 3)>})
    -> (tensor<f32> {parc.name = "loss"}, tensor<2x3xf32> {parc.name = "logits"}) {
  %0 = parc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %1 = parc.cross_entropy %0, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<f32>
  return %1, %0 : tensor<f32>, tensor<2x3xf32>
}
