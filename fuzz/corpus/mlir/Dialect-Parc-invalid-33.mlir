
func.func @transpose_length(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.transpose' op permutation has 3 entries but 'input' has rank 2}}
  %0 = parc.transpose %x [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
