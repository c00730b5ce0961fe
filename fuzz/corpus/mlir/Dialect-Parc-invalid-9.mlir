
func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op inferred type(s) 'tensor<2x5xf32>' are incompatible with return type(s) of operation 'tensor<2x6xf32>'}}
  %0 = parc.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x6xf32>
  return
}
