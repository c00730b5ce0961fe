
func.func @attention_value_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x4x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op 'value' dimension 1 has size 4 but 'key' has size 2}}
  %0 = parc.attention %q, %k, %v scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>
  return
}
