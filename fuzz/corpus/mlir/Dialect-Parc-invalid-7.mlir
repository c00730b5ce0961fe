
// Two contracting dimensions: the second differs.
func.func @matmul_matrix_dims_contracting(%a: tensor<2x3x4xf32>, %b: tensor<5x3x6xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op contracting dimensions differ: 'lhs' dimension 2 has size 4 but 'rhs' dimension 2 has size 6}}
  %0 = parc.matmul %a, %b transpose_rhs matrix_dims [1, 2, 1] : tensor<2x3x4xf32>, tensor<5x3x6xf32> -> tensor<2x5xf32>
  return
}
