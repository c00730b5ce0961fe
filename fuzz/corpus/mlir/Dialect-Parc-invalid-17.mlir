
func.func @unary_integer(%a: tensor<3xi32>) {
  // expected-error @+1 {{'parc.neg' op operand #0 must be statically shaped tensor}}
  %0 = parc.neg %a : tensor<3xi32>
  return
}
