
func.func @rms_norm_gamma(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{'parc.rms_norm' op operand 'gamma' must have shape [8] (the last dimension of 'input'), got rank 2 with dimension 0 of size 2}}
  %0 = parc.rms_norm %x, %g eps = 1.0e-6 : tensor<2x8xf32>, tensor<2x8xf32>
  return
}
