
// expected-error @+1 {{argument #0 of 'bad_init' has a 'parc.init' that is not a #parc.init<...>}}
func.func @bad_init(%a: tensor<4xf32> {parc.role = "param", parc.name = "w", parc.init = 1.0}) {
  return
}
