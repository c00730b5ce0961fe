
func.func @conv2d_weight_grad_rank(%x: tensor<1x1x4xf32>, %g: tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{'parc.conv2d_weight_grad' op 'input' and 'weight' must have rank 4, got 3 and 4}}
  %0 = parc.conv2d_weight_grad %x, %g strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<1x1x4xf32>, tensor<1x2x2x2xf32> -> tensor<2x1x3x3xf32>
  return
}
