
func.func @slice_stride(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.slice' op dimension 0: offset 0, size 2 and stride 0 must be >= 0, >= 0 and >= 1}}
  %0 = parc.slice %x offsets [0] sizes [2] strides [0] : tensor<4xf32> -> tensor<2xf32>
  return
}
