
func.func @slice_rank(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.slice' op sizes has 1 entries but 'input' has rank 2}}
  %0 = parc.slice %x offsets [0, 0] sizes [4] strides [1, 1] : tensor<4x4xf32> -> tensor<4xf32>
  return
}
