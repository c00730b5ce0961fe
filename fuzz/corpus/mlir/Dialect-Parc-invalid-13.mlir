
func.func @sub_element_types(%a: tensor<3xf32>, %b: tensor<3xbf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.sub' op element type of 'lhs' (f32) differs from 'rhs' (bf16)}}
  %0 = parc.sub %a, %b : tensor<3xf32>, tensor<3xbf16> -> tensor<3xf32>
  return
}
