
// expected-error @+1 {{argument #0 of 'init_from_type' has a 'parc.init_from' that is not an argument's name}}
func.func @init_from_type(%a: tensor<4xf32> {parc.role = "param", parc.name = "w", parc.init_from = 1}) {
  return
}
