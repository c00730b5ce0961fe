
// An argument's buffer holds something other than its next value: the next
// step would read it as the argument.
func.func @not_next_value(%w: tensor<4xf32> {parc.role = "param", parc.name = "w", parc.offset = 0 : i64})
    -> (tensor<4xf32> {parc.name = "y"}) attributes {parc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{memory plan: result #0 of 'parc.exp' [0, 16) overlaps argument #0 [0, 16), which is still live}}
  %0 = parc.exp %w {parc.offsets = array<i64: 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
