
func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op operand 'lhs' must have rank >= 2, got rank 1}}
  %0 = parc.matmul %a, %b : tensor<3xf32>, tensor<3x5xf32> -> tensor<5xf32>
  return
}
