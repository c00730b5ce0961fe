
func.func @embedding_grad(%ids: tensor<2xi64>, %g: tensor<3x8xf32>) {
  // expected-error @+1 {{'parc.embedding_grad' op expects 'gradient' of shape ids x [dim] and a [vocab, dim] result}}
  %0 = parc.embedding_grad %ids, %g : tensor<2xi64>, tensor<3x8xf32> -> tensor<10x8xf32>
  return
}
