
dist.mesh @mesh axes = [tp = 4]
func.func @twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op lists axis 'tp' twice}}
  %0 = dist.all_reduce sum %x on @mesh ["tp", "tp"] : tensor<4xf32>
  return
}
