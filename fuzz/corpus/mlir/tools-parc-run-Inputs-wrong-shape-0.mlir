func.func @forward(%x: tensor<2x4xf32> {parc.role = "input", parc.name = "x"},
                   %w: tensor<5x3xf32> {parc.role = "param", parc.name = "w"}) -> tensor<2x3xf32> {
  %0 = parc.matmul %x, %w : tensor<2x4xf32>, tensor<5x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
