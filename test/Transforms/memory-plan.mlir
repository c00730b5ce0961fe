// RUN: parc-opt %s --parc-plan-memory | FileCheck %s
// Arguments and results keep their place for the whole program; a tensor
// that dies is reused, but never by the op that reads it last.

// 4x4xf32 = 64 bytes each, so offsets step by 64.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %arg0: tensor<4x4xf32> {parc.name = "x", parc.offset = 0 : i64
// CHECK-SAME: attributes {parc.arena_bytes = 192 : i64, parc.tensor_bytes = 320 : i64}
// CHECK: parc.relu %arg0 {parc.offsets = array<i64: 64>}
// CHECK: parc.exp %{{.*}} {parc.offsets = array<i64: 128>}
// %0 is dead after %1: %2 takes its place, and %3 takes %1's.
// CHECK: parc.tanh %{{.*}} {parc.offsets = array<i64: 64>}
// CHECK: parc.neg %{{.*}} {parc.offsets = array<i64: 128>}
func.func @chain(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x"}) -> tensor<4x4xf32> {
  %0 = parc.relu %x : tensor<4x4xf32>
  %1 = parc.exp %0 : tensor<4x4xf32>
  %2 = parc.tanh %1 : tensor<4x4xf32>
  %3 = parc.neg %2 : tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}
