
func.func @tanh_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = parc.tanh %a : tensor<*xf32>
  return
}
