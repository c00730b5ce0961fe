func.func @forward(%x: tensor<2xf32> {parc.role = "input", parc.name = "x"})
    -> tensor<2xf32> {
  %0 = parc.relu %x : tensor<2xf32
  return %0 : tensor<2xf32>
}
