
func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x5xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op element type of 'lhs' (f32) differs from 'rhs' (f16)}}
  %0 = parc.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf16> -> tensor<2x5xf32>
  return
}
