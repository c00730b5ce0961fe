
func.func @matmul_integers(%a: tensor<2x3xi32>, %b: tensor<3x5xi32>) {
  // expected-error @+1 {{'parc.matmul' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = parc.matmul %a, %b : tensor<2x3xi32>, tensor<3x5xi32> -> tensor<2x5xi32>
  return
}
