
// expected-error @+1 {{result #1 of 'result_names' repeats the name 'loss'}}
func.func @result_names(%a: tensor<f32> {parc.role = "input", parc.name = "x"})
    -> (tensor<f32> {parc.name = "loss"}, tensor<f32> {parc.name = "loss"}) {
  return %a, %a : tensor<f32>, tensor<f32>
}
