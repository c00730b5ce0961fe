func.func @forward(%x: tensor<2xf32> {parc.role = "input", parc.name = "x"}) -> (tensor<2xf32> {parc.name = "y"}) {
  %y = parc.relu %x : tensor<2xf32>
  return %y : tensor<2xf32>
}
