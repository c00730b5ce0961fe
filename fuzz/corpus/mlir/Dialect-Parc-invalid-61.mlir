
func.func @cross_entropy_grad_normalizer_shape(%x: tensor<2x8xf32>, %y: tensor<2xi64>, %s: tensor<f32>, %n: tensor<2x1xf32>, %b: tensor<i64>) {
  // expected-error @+1 {{'parc.cross_entropy_grad' op 'normalizer' must have the labels' shape and the logits' element type}}
  %0 = parc.cross_entropy_grad %x, %y, %s normalizer %n shard %b count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>, tensor<2x1xf32>
  return
}
