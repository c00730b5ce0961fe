// The loss reads batch_norm's mean: autodiff refuses (batch-norm-statistics.test).
func.func @forward(%x: tensor<4x3xf32> {parc.name = "x", parc.role = "input", parc.init = #parc.init<uniform(-1.0, 1.0)>},
                   %g: tensor<3xf32> {parc.name = "g", parc.role = "param"},
                   %b: tensor<3xf32> {parc.name = "b", parc.role = "param"}) -> (tensor<f32> {parc.name = "loss"}) {
  %y, %mean, %var = parc.batch_norm %x, %g, %b eps = 1.0e-5 : tensor<4x3xf32>, tensor<3xf32>
  %loss = parc.reduce_sum %mean [0] : tensor<3xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
