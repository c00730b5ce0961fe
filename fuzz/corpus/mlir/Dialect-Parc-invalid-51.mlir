
func.func @cross_entropy_labels(%x: tensor<2x8x10xf32>, %y: tensor<2x4xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.cross_entropy' op 'labels' dimension 1 has size 4 but 'logits' has size 8}}
  %0 = parc.cross_entropy %x, %y : tensor<2x8x10xf32>, tensor<2x4xi64> -> tensor<f32>
  return
}
