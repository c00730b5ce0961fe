
// Three column dimensions need a rhs of rank 4 at least.
func.func @matmul_matrix_dims_rank(%a: tensor<2x3xf32>, %b: tensor<3x5x2xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op operand 'rhs' must have rank >= 4, got rank 3}}
  %0 = parc.matmul %a, %b matrix_dims [1, 1, 3] : tensor<2x3xf32>, tensor<3x5x2xf32> -> tensor<2x5x2xf32>
  return
}
