
func.func @conv2d_padding_overflow(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op the width geometry overflows int64}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 9223372036854775807, 0, 1] dilations [1, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}
