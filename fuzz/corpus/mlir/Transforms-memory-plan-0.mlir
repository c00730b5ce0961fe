// RUN: parc-opt %s --parc-plan-memory --parc-verify-memory-plan -split-input-file | FileCheck %s
// RUN: parc-opt %s --parc-plan-memory=greedy-work=0 --parc-verify-memory-plan -split-input-file | FileCheck %s --check-prefix=BESTFIT
// RUN: not parc-opt %s --parc-plan-memory=greedy-work=-1 -split-input-file 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: --parc-plan-memory: greedy-work must not be negative, got -1
// Arguments and results keep their place for the whole program; a tensor
// that dies is reused; an elementwise op writes over an operand that dies
// at it; a parameter's next value goes into the parameter's buffer.

// 4x4xf32 = 64 bytes each. relu cannot write over the argument %x (it
// persists); each later op writes over its dying operand.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %arg0: tensor<4x4xf32> {parc.name = "x", parc.offset = 0 : i64
// CHECK-SAME: attributes {parc.arena_bytes = 128 : i64, parc.tensor_bytes = 320 : i64}
// CHECK: parc.relu %arg0 {parc.offsets = array<i64: 64>}
// CHECK: parc.exp %{{.*}} {parc.offsets = array<i64: 64>}
// CHECK: parc.tanh %{{.*}} {parc.offsets = array<i64: 64>}
// CHECK: parc.neg %{{.*}} {parc.offsets = array<i64: 64>}
func.func @chain(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x"}) -> tensor<4x4xf32> {
  %0 = parc.relu %x : tensor<4x4xf32>
  %1 = parc.exp %0 : tensor<4x4xf32>
  %2 = parc.tanh %1 : tensor<4x4xf32>
  %3 = parc.neg %2 : tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}
