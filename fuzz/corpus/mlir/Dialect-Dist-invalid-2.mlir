
dist.mesh @mesh axes = [tp = 4]
func.func @unknown_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op refers to unknown mesh @other}}
  %0 = dist.all_reduce sum %x on @other ["tp"] : tensor<4xf32>
  return
}
