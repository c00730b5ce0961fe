
func.func @mul_result(%a: tensor<3xf32>, %b: tensor<1xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.mul' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<1xf32>'}}
  %0 = parc.mul %a, %b : tensor<3xf32>, tensor<1xf32> -> tensor<1xf32>
  return
}
