
func.func @attention_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op 'key' dimension 1 has size 2 but 'query' has size 4}}
  %0 = parc.attention %q, %k, %k causal scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}
