
func.func @div_integers(%a: tensor<3xi64>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'parc.div' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = parc.div %a, %b : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return
}
