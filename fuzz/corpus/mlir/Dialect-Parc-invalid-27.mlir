
func.func @rms_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'parc.rms_norm' op operand 'input' must have rank >= 1}}
  %0 = parc.rms_norm %x, %g eps = 1.0e-6 : tensor<f32>, tensor<1xf32>
  return
}
