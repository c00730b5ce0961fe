
func.func @batch_norm_channels(%x: tensor<2x3x2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'parc.batch_norm' op operand 'gamma' must have shape [3] (the channels, dimension 1 of 'input')}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 : tensor<2x3x2x2xf32>, tensor<2xf32>
  return
}
