
func.func @cross_entropy_rank(%x: tensor<2x10xf32>, %y: tensor<2x10xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.cross_entropy' op operand 'labels' must have rank 1 (that of 'logits' without its class dimension), got rank 2}}
  %0 = parc.cross_entropy %x, %y : tensor<2x10xf32>, tensor<2x10xi64> -> tensor<f32>
  return
}
