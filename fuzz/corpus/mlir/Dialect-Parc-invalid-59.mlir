
func.func @cross_entropy_grad(%x: tensor<2x8xf32>, %y: tensor<2xi64>, %s: tensor<f32>) {
  // expected-error @+1 {{'parc.cross_entropy_grad' op 'count' must be positive}}
  %0 = parc.cross_entropy_grad %x, %y, %s count = 0 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>
  return
}
