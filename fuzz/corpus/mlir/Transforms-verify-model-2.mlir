
// expected-error @+1 {{argument #0 of 'no_role' needs a string attribute 'parc.role' (param, input, label, optstate or carry)}}
func.func @no_role(%w: tensor<4xf32> {parc.name = "w"}) {
  return
}
