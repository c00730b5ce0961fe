
func.func @attention_mask_type(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf16>) {
  // expected-error @+1 {{'parc.attention' op}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf16>
  return
}
