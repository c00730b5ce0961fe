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
