
func.func @conv2d_group_channels(%x: tensor<1x6x4x4xf32>, %w: tensor<4x6x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op 'weight' dimension 1 has size 6, but the 6 input channels in 2 groups give 3 per group}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 2 : tensor<1x6x4x4xf32>, tensor<4x6x1x1xf32>
  return
}
