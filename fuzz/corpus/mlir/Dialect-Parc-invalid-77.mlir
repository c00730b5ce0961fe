
func.func @batch_norm_groups(%x: tensor<6x2x2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'parc.batch_norm' op 'groups' (4) must be positive and divide the batch (6)}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 groups = 4 : tensor<6x2x2x2xf32>, tensor<2xf32>
  return
}
