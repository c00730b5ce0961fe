
func.func @batch_norm_negative_groups(%x: tensor<6x2x2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'parc.batch_norm_grad' op 'groups' (-2) must be positive and divide the batch (6)}}
  %dx, %dg, %db = parc.batch_norm_grad %x, %c, %x eps = 1.0e-5 groups = -2 : tensor<6x2x2x2xf32>, tensor<2xf32>
  return
}
