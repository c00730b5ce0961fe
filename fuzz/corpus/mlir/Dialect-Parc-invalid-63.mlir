
func.func @compare_float_result(%a: tensor<2xf32>) {
  // expected-error @+1 {{'parc.compare' op result #0 must be statically shaped tensor of 32-bit signless integer values}}
  %0 = parc.compare ge %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return
}
