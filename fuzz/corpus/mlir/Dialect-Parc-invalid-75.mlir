
func.func @max_pool2d_kernel(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'parc.max_pool2d' op kernel sizes must be positive, got 0}}
  %0 = parc.max_pool2d %x kernel [0, 1] strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x4x4xf32>
  return
}
