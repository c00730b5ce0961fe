
func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.reshape' op cannot reshape 'input' of 6 elements into 8 elements}}
  %0 = parc.reshape %x : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}
