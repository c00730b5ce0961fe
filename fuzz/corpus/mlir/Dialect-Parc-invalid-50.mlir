
func.func @attention_value_seq(%q: tensor<2x4x8x16xf32>, %v: tensor<2x4x6x16xf32>) {
  // expected-error @+1 {{'parc.attention' op 'value' dimension 2 has size 6 but 'key' has size 8}}
  %0 = parc.attention %q, %q, %v causal scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>
  return
}
