
func.func @attention_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x4x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op operand 'query' must be [batch, heads, seq, head_dim], got rank 3}}
  %0 = parc.attention %q, %k, %k causal scale = 0.25 : tensor<2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return
}
