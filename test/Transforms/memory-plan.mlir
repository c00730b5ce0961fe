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

// -----

// A matmul may not write over its operands: %1 gets a buffer of its own
// although %0 dies at it (four buffers: 256 bytes); the relu after it
// writes over %1.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: parc.arena_bytes = 256 : i64
// CHECK: parc.exp %arg0 {parc.offsets = array<i64: {{128|192}}>}
// CHECK: parc.matmul {{.*}} {parc.offsets = array<i64: [[MATMUL:128|192]]>}
// CHECK: parc.relu {{.*}} {parc.offsets = array<i64: [[MATMUL]]>}
func.func @matmul(%x: tensor<4x4xf32> {parc.role = "input", parc.name = "x"},
                  %w: tensor<4x4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4x4xf32> {
  %0 = parc.exp %x : tensor<4x4xf32>
  %1 = parc.matmul %0, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = parc.relu %1 : tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}

// -----

// The loss's gradient writes over the logits, its last reader (a row-wise
// kernel reads each row whole before writing it). The arguments take 256
// bytes (64-byte aligned), the logits and their gradient 128 together.
// CHECK-LABEL: func.func @loss_grad
// CHECK-SAME: parc.arena_bytes = 384 : i64
// CHECK: parc.exp %arg0 {parc.offsets = array<i64: [[LOGITS:[0-9]+]]>}
// CHECK: parc.cross_entropy_grad {{.*}} {parc.offsets = array<i64: [[LOGITS]]>}
func.func @loss_grad(%x: tensor<4x8xf32> {parc.role = "input", parc.name = "x"},
                     %labels: tensor<4xi64> {parc.role = "input", parc.name = "labels"},
                     %g: tensor<f32> {parc.role = "input", parc.name = "g"}) -> tensor<4x8xf32> {
  %0 = parc.exp %x : tensor<4x8xf32>
  %1 = parc.cross_entropy_grad %0, %labels, %g count = 4 : tensor<4x8xf32>, tensor<4xi64>, tensor<f32>
  return %1 : tensor<4x8xf32>
}

// -----

// Donation: the SGD step writes the new parameter and momentum over the
// old ones (their last reader), so the step holds each once; the loss-like
// result that reads %w before the update keeps its own buffer.
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: %arg0: tensor<4x4xf32> {parc.name = "w", parc.offset = 0 : i64
// CHECK-SAME: %arg1: tensor<4x4xf32> {parc.name = "g", parc.offset = 64 : i64
// CHECK-SAME: %arg2: tensor<4x4xf32> {parc.name = "w.momentum", parc.offset = 128 : i64
// CHECK: parc.sgd_update {{.*}} {{{.*}}parc.offsets = array<i64: 0, 128>
func.func @sgd(%w: tensor<4x4xf32> {parc.role = "param", parc.name = "w"},
               %g: tensor<4x4xf32> {parc.role = "input", parc.name = "g"},
               %b: tensor<4x4xf32> {parc.role = "optstate", parc.name = "w.momentum"})
    -> (tensor<4x4xf32> {parc.name = "doubled"}, tensor<4x4xf32> {parc.name = "w"},
        tensor<4x4xf32> {parc.name = "w.momentum"}) {
  %d = parc.add %w, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %p, %m = parc.sgd_update %w, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<4x4xf32>
  return %d, %p, %m : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// No donation when the argument is read after its next value exists: the
// update comes before the last read of %w.
// CHECK-LABEL: func.func @late_read
// CHECK: parc.sgd_update {{.*}} {{{.*}}parc.offsets = array<i64: 192, 128>
func.func @late_read(%w: tensor<4x4xf32> {parc.role = "param", parc.name = "w"},
                     %g: tensor<4x4xf32> {parc.role = "input", parc.name = "g"},
                     %b: tensor<4x4xf32> {parc.role = "optstate", parc.name = "w.momentum"})
    -> (tensor<4x4xf32> {parc.name = "w"}, tensor<4x4xf32> {parc.name = "w.momentum"},
        tensor<4x4xf32> {parc.name = "after"}) {
  %p, %m = parc.sgd_update %w, %g, %b {lr = 1.0e-01 : f64, momentum = 9.0e-01 : f64} : tensor<4x4xf32>
  %a = parc.add %w, %p : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %p, %m, %a : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Best fit in program order leaves a hole the offline placements avoid: the
// 64-byte %0 dies before the 256-byte %2 starts, which its freed range does
// not hold, so best fit puts %2 and %3 above %1 (arguments 192 + 704). By
// size, %2 and %3 go first at the bottom, %1 above them, and %0 where %2
// will lie (192 + 640). greedy-work=0 leaves best fit alone.
// CHECK-LABEL: func.func @hole
// CHECK-SAME: parc.arena_bytes = 832 : i64
// BESTFIT-LABEL: func.func @hole
// BESTFIT-SAME: parc.arena_bytes = 896 : i64
func.func @hole(%x: tensor<16xf32> {parc.role = "input", parc.name = "x"},
                %y: tensor<32xf32> {parc.role = "input", parc.name = "y"}) -> tensor<64xf32> {
  %0 = parc.exp %x : tensor<16xf32>
  %1 = parc.concat %0, %x axis = 0 : tensor<16xf32>, tensor<16xf32> -> tensor<32xf32>
  %2 = parc.concat %y, %y axis = 0 : tensor<32xf32>, tensor<32xf32> -> tensor<64xf32>
  %3 = parc.concat %1, %1 axis = 0 : tensor<32xf32>, tensor<32xf32> -> tensor<64xf32>
  %4 = parc.add %2, %3 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %4 : tensor<64xf32>
}
