// Two floats through two elementwise ops: 24 bytes of tensors, each in its
// own 64-byte aligned buffer.
func.func @main(%x: tensor<2xf32> {parc.role = "input", parc.name = "x"}) -> (tensor<2xf32> {parc.name = "y"}) {
  %0 = parc.relu %x : tensor<2xf32>
  %1 = parc.exp %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}
