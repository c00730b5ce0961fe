
func.func @unary_integer(%a: tensor<3xi32>) {
  // expected-error @+1 {{'parc.relu' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = parc.relu %a : tensor<3xi32>
  return
}
