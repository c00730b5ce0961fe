// RUN: parc-opt %s --parc-verify-memory-plan -split-input-file -verify-diagnostics

// Two tensors live at once share bytes: %1 is written into the middle of
// %0, which the add still reads after it.
func.func @overlap(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4xf32> attributes {parc.arena_bytes = 192 : i64} {
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4xf32>
  // expected-error @+1 {{memory plan: result #0 of 'parc.tanh' [72, 88) overlaps result #0 of 'parc.exp' [64, 80), which is still live}}
  %1 = parc.tanh %0 {parc.offsets = array<i64: 72>} : tensor<4xf32>
  %2 = parc.add %0, %1 {parc.offsets = array<i64: 128>} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A matmul does not write over its operand in place.
func.func @not_in_place(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4x4xf32> attributes {parc.arena_bytes = 192 : i64} {
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4x4xf32>
  // expected-error @+1 {{overlaps result #0 of 'parc.exp' [64, 128), which is still live}}
  %1 = parc.matmul %0, %0 {parc.offsets = array<i64: 64>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// An elementwise op may write over its dying operand.
func.func @in_place(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4x4xf32> attributes {parc.arena_bytes = 128 : i64} {
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4x4xf32>
  %1 = parc.tanh %0 {parc.offsets = array<i64: 64>} : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// -----

// Outside the arena.
func.func @outside(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", parc.offset = 0 : i64})
    -> tensor<4xf32> attributes {parc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{memory plan: result #0 of 'parc.exp' lies outside the 64-byte arena}}
  %0 = parc.exp %x {parc.offsets = array<i64: 64>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// An argument's buffer holds something other than its next value: the next
// step would read it as the argument.
func.func @not_next_value(%w: tensor<4xf32> {parc.role = "param", parc.name = "w", parc.offset = 0 : i64})
    -> (tensor<4xf32> {parc.name = "y"}) attributes {parc.arena_bytes = 64 : i64} {
  // expected-error @+1 {{memory plan: result #0 of 'parc.exp' [0, 16) overlaps argument #0 [0, 16), which is still live}}
  %0 = parc.exp %w {parc.offsets = array<i64: 0>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
