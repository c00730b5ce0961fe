
// expected-error @+1 {{argument #0 of 'no_name' needs a non-empty string attribute 'parc.name'}}
func.func @no_name(%w: tensor<4xf32> {parc.role = "param"}) {
  return
}
