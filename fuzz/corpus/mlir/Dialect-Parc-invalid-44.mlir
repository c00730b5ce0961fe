
func.func @attention_heads(%q: tensor<2x3x8x16xf32>, %k: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op the key's 2 heads must divide the query's 3 (grouped-query attention)}}
  %0 = parc.attention %q, %k, %k causal scale = 0.25 : tensor<2x3x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}
