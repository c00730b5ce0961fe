func.func @forward(%x: tensor<2xf32> {parc.role = "input", parc.name = "x"},
                   %b: tensor<2xf32> {parc.role = "param"}) -> tensor<2xf32> {
  %0 = parc.add %x, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
