
func.func @broadcast_to(%x: tensor<3xf32>) {
  // expected-error @+1 {{'parc.broadcast_to' op 'input' dimension 0 of size 3 cannot broadcast to size 4}}
  %0 = parc.broadcast_to %x : tensor<3xf32> -> tensor<2x4xf32>
  return
}
