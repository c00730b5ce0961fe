
func.func @second_order(%x: tensor<4x3xf32> {parc.role = "param", parc.name = "x"},
                        %g: tensor<4x3xf32> {parc.role = "input", parc.name = "g"}) -> tensor<f32> {
  // expected-error @+1 {{'parc.softmax_grad' op has no gradient rule; autodiff cannot differentiate the loss through it}}
  %0 = parc.softmax_grad %x, %g axis = 1 : tensor<4x3xf32>
  %1 = parc.reduce_sum %0 [0, 1] : tensor<4x3xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
