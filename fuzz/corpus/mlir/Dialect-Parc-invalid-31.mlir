
func.func @reshape_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.reshape' op result element type differs from 'input'}}
  %0 = parc.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return
}
