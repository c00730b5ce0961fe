
dist.mesh @mesh axes = [tp = 4]
func.func @slice_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_slice' op dimension 1 is out of range for rank 1}}
  %0 = dist.all_slice %x on @mesh ["tp"] dim = 1 : tensor<4xf32> -> tensor<1xf32>
  return
}
