
dist.mesh @mesh axes = [tp = 4]
func.func @scatter(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op dimension 1 of size 6 cannot be split into 4 chunks}}
  %0 = dist.reduce_scatter %x on @mesh ["tp"] dim = 1 : tensor<4x6xf32> -> tensor<4x1xf32>
  return
}
