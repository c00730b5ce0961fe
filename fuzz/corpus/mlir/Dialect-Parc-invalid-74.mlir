
func.func @avg_pool2d_window(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'parc.avg_pool2d' op the dilated kernel's width (5) exceeds the padded input's (4)}}
  %0 = parc.avg_pool2d %x kernel [1, 5] strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x4x4xf32>
  return
}
