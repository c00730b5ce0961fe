
func.func @avg_pool2d_grad_shape(%g: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'parc.avg_pool2d_grad' op 'gradient' has type 'tensor<1x1x3x3xf32>', but the pooling's result has shape [1, 1, 2, 2]}}
  %0 = parc.avg_pool2d_grad %g kernel [2, 2] strides [2, 2] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x3x3xf32> -> tensor<1x1x4x4xf32>
  return
}
