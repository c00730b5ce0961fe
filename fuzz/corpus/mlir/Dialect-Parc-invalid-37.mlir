
func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.concat' op axis 2 is out of range for rank 2}}
  %0 = parc.concat %a, %a axis = 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
