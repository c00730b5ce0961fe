
// expected-error @+1 {{unknown init distribution 'gaussian'; expected normal, uniform or constant}}
func.func @init_kind(%x: tensor<2xf32> {parc.init = #parc.init<gaussian(0.0, 1.0)>}) {
  return
}
