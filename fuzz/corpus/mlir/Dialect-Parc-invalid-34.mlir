
func.func @reduce_axis(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = parc.reduce_sum %x [2] : tensor<2x3xf32> -> tensor<2xf32>
  return
}
