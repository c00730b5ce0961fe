
func.func @constant_type() {
  // expected-error @+1 {{'parc.constant' op result #0 must be statically shaped tensor}}
  %0 = parc.constant dense<1.0> : tensor<2xf64>
  return
}
