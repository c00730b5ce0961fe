
// expected-error @+1 {{argument #0 of 'bad_role' has unknown role 'weight'; expected param, input, label, optstate or carry}}
func.func @bad_role(%w: tensor<4xf32> {parc.role = "weight", parc.name = "w"}) {
  return
}
