
func.func @cross_entropy_float_labels(%x: tensor<2x10xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{'parc.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = parc.cross_entropy %x, %y : tensor<2x10xf32>, tensor<2xf32> -> tensor<f32>
  return
}
