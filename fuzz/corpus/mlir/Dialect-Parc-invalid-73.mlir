
func.func @max_pool2d_padding(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'parc.max_pool2d' op padding 2 exceeds half the kernel's 3}}
  %0 = parc.max_pool2d %x kernel [3, 3] strides [1, 1] padding [0, 0, 2, 0] dilations [1, 1] : tensor<1x1x4x4xf32>
  return
}
