
func.func @matmul_dynamic(%a: tensor<?x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'parc.matmul' op operand #0 must be statically shaped tensor}}
  %0 = parc.matmul %a, %b : tensor<?x3xf32>, tensor<3x5xf32> -> tensor<?x5xf32>
  return
}
