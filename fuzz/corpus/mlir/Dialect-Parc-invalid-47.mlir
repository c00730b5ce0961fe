
func.func @attention_mask_heads(%q: tensor<2x4x8x16xf32>, %m: tensor<2x2x8x8xf32>) {
  // expected-error @+1 {{'parc.attention' op 'mask' dimension 1 has size 2; the scores' is 4 (or 1 to broadcast)}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x8xf32>
  return
}
