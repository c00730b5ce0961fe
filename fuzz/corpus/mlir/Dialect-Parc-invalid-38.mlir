
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.concat' op inputs[1] has rank 3, inputs[0] has rank 2}}
  %0 = parc.concat %a, %b axis = 0 : tensor<2x3xf32>, tensor<2x3x1xf32> -> tensor<4x3xf32>
  return
}
