
func.func @conv2d_kernel_exceeds_input(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'parc.conv2d' op the dilated kernel's height (5) exceeds the padded input's (4)}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [2, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return
}
