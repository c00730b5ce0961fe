
// contract_batch sums over batch dimensions both operands have.
func.func @matmul_contract_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{'parc.matmul' op contract_batch needs operands with the same batch dimensions (at least one), got tensor<2x4x3xf32> and tensor<3x5xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = parc.matmul %a, %b contract_batch : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return
}
