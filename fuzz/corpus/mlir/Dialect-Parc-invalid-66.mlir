
func.func @conv2d_groups(%x: tensor<1x6x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op 4 groups must divide the 6 input channels and the 4 filters}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 4 : tensor<1x6x4x4xf32>, tensor<4x3x1x1xf32>
  return
}
