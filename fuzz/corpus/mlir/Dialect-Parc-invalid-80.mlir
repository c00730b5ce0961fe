
func.func @batch_norm_rank(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'parc.batch_norm' op operand 'input' must have rank >= 2 ([batch, channels, ...]), got rank 1}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 : tensor<8xf32>, tensor<8xf32>
  return
}
