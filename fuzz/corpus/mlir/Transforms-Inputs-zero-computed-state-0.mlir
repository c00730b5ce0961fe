func.func @forward(%w: tensor<4xf32> {parc.name = "w", parc.role = "param"}, %g: tensor<4xf32> {parc.name = "g", parc.role = "input"}) -> (tensor<4xf32> {parc.name = "w"}) {
  %b = parc.mul %g, %g {parc.phase = "backward"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %p, %nb = parc.sgd_update %w, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64, parc.phase = "update"} : tensor<4xf32>
  return %p : tensor<4xf32>
}
