
func.func @layer_norm_beta_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'parc.layer_norm' op element type of 'input' (f32) differs from 'beta' (f16)}}
  %0 = parc.layer_norm %x, %g, %b eps = 1.0e-5 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf16>
  return
}
