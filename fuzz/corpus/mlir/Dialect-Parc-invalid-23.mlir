
func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.softmax' op axis 2 is out of range for rank 2}}
  %0 = parc.softmax %a axis = 2 : tensor<2x3xf32>
  return
}
