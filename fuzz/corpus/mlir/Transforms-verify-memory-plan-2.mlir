
// An elementwise op may write over its dying operand.
func.func @in_place(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4x4xf32> attributes {parc.arena_bytes = 128 : i64} {
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4x4xf32>
  %1 = parc.tanh %0 {parc.offsets = array<i64: 64>} : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
