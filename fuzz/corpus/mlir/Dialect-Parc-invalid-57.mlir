
func.func @slice_grad(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.slice_grad' op dimension 1: 3 elements from offset 2 with stride 2 do not fit in size 6}}
  %0 = parc.slice_grad %x offsets [0, 2] strides [1, 2] : tensor<2x3xf32> -> tensor<2x6xf32>
  return
}
