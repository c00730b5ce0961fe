
func.func @embedding_float_ids(%t: tensor<10x4xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{'parc.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = parc.embedding %t, %ids : tensor<10x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  return
}
