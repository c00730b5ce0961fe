
// expected-error @+1 {{uniform init needs low < high, got [5.000000e+00, 5.000000e+00)}}
func.func @init_range(%x: tensor<2xi64> {parc.init = #parc.init<uniform(5, 5)>}) {
  return
}
