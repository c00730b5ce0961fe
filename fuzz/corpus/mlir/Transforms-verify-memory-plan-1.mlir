
// A matmul does not write over its operand in place.
func.func @not_in_place(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4x4xf32> attributes {parc.arena_bytes = 192 : i64} {
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4x4xf32>
  // expected-error @+1 {{overlaps result #0 of 'parc.exp' [64, 128), which is still live}}
  %1 = parc.matmul %0, %0 {parc.offsets = array<i64: 64>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
