
func.func @compare_mixed_types(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'parc.compare' op}}
  %0 = parc.compare eq %a, %b : tensor<2xf32>, tensor<2xi32> -> tensor<2xi32>
  return
}
