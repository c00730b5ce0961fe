
// Outside the arena.
func.func @outside(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4xf32> attributes {parc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{memory plan: result #0 of 'parc.exp' lies outside the 64-byte arena}}
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
