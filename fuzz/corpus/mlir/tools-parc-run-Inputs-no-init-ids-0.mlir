func.func @forward(%t: tensor<4x2xf32> {parc.role = "param", parc.name = "table"},
                   %ids: tensor<3xi64> {parc.role = "input", parc.name = "ids"}) -> tensor<3x2xf32> {
  %0 = parc.embedding %t, %ids : tensor<4x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
