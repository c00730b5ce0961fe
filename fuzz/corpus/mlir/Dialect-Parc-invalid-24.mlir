
func.func @layer_norm_gamma(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'parc.layer_norm' op operand 'gamma' must have shape [8] (the last dimension of 'input'), got rank 1 with dimension 0 of size 4}}
  %0 = parc.layer_norm %x, %g, %b eps = 1.0e-5 : tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>
  return
}
