
func.func @embedding_table(%t: tensor<10xf32>, %ids: tensor<4xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.embedding' op operand 'table' must be [vocab, dim] (rank 2), got rank 1}}
  %0 = parc.embedding %t, %ids : tensor<10xf32>, tensor<4xi64> -> tensor<4xf32>
  return
}
