
func.func @reduce_twice(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.reduce_mean' op axis 1 is listed twice}}
  %0 = parc.reduce_mean %x [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}
