
func.func @matmul_matrix_dims_count(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op matrix_dims must be three counts >= 1 (rows, contracting, columns), got [1, 1]}}
  %0 = parc.matmul %a, %b matrix_dims [1, 1] : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf32>
  return
}
