
func.func @conv2d_input_grad_shape(%w: tensor<2x1x3x3xf32>, %g: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{'parc.conv2d_input_grad' op 'gradient' has type 'tensor<1x2x3x3xf32>', but the convolution's result has shape [1, 2, 2, 2]}}
  %0 = parc.conv2d_input_grad %w, %g strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<2x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x1x4x4xf32>
  return
}
