
func.func @cross_entropy_grad_normalizer_without_shard(%x: tensor<2x8xf32>, %y: tensor<2xi64>, %s: tensor<f32>, %n: tensor<2xf32>) {
  // expected-error @+1 {{'parc.cross_entropy_grad' op takes 'normalizer' and 'shard' together}}
  %0 = parc.cross_entropy_grad %x, %y, %s normalizer %n count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>, tensor<2xf32>
  return
}
