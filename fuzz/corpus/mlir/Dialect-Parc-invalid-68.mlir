
func.func @conv2d_stride(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op strides and dilations must be positive, got 0}}
  %0 = parc.conv2d %x, %w strides [0, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}
