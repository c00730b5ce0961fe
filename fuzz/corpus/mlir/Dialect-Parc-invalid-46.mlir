
func.func @attention_mask_rank(%q: tensor<2x4x8x16xf32>, %m: tensor<8x8xf32>) {
  // expected-error @+1 {{'parc.attention' op 'mask' must be [batch, heads, seq, kv_seq], got rank 2}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf32>
  return
}
