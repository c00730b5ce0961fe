
func.func @attention_mask_keys(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x1xf32>) {
  // expected-error @+1 {{'parc.attention' op 'mask' dimension 3 has size 1; the scores' is 8}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x1xf32>
  return
}
