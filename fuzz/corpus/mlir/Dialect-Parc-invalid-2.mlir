
func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op cannot broadcast 'lhs' dimension 0 (size 2) against 'rhs' dimension 0 (size 3)}}
  %0 = parc.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x3x5xf32> -> tensor<2x4x5xf32>
  return
}
