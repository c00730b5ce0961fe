
func.func @conv2d_padding_count(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op strides and dilations need 2 values and padding 4}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [1, 1] dilations [1, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}
