
func.func @gelu_form(%a: tensor<3xf32>) {
  // expected-error @+2 {{expected ::mlir::parc::GeluApproximation to be one of: erf, tanh}}
  // expected-error @+1 {{failed to parse Parc_GeluApproximationAttr parameter 'value'}}
  %0 = parc.gelu sigmoid %a : tensor<3xf32>
  return
}
