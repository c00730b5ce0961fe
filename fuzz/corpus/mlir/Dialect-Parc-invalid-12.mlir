
func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.add' op cannot broadcast 'lhs' dimension 1 (size 3) against 'rhs' dimension 0 (size 4)}}
  %0 = parc.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}
