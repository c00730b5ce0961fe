
dist.mesh @mesh axes = [tp = 4]
func.func @unknown_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op unknown axis 'dp' of mesh @mesh}}
  %0 = dist.all_reduce sum %x on @mesh ["dp"] : tensor<4xf32>
  return
}
