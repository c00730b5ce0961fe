
func.func @transpose_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.transpose' op permutation entry 0 is out of range or repeated}}
  %0 = parc.transpose %x [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}
