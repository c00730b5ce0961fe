
// expected-error @+1 {{autodiff needs a function whose first result is a scalar float loss}}
func.func @no_loss(%w: tensor<4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4xf32> {
  %0 = parc.relu %w : tensor<4xf32>
  return %0 : tensor<4xf32>
}
