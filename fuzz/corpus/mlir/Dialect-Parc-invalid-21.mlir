
func.func @silu_integer(%a: tensor<2xi64>) {
  // expected-error @+1 {{'parc.silu' op operand #0 must be statically shaped tensor}}
  %0 = parc.silu %a : tensor<2xi64>
  return
}
