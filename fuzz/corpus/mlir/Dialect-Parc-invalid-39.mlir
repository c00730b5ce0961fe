
func.func @slice_bounds(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.slice' op dimension 1: slice reaches index 5 but 'input' has size 4}}
  %0 = parc.slice %x offsets [0, 1] sizes [4, 3] strides [1, 2] : tensor<4x4xf32> -> tensor<4x3xf32>
  return
}
