// RUN: parc-opt %s -parc-print-model-stats -o /dev/null | FileCheck %s

// Parameters: 16*32 + 32 = 544 elements of f32 = 2176 bytes.
// FLOPs: matmul 2*8*16*32 = 8192, add 8*32 = 256, relu 256.
// CHECK: function @model
// CHECK-NEXT: parameters: 544 (544, 2.18 KB)
// CHECK-NEXT: forward FLOPs per step: 8704 (8.70 K)
// CHECK-NEXT: training FLOPs per step (3x forward): 26112 (26.11 K)
// CHECK-NEXT: ops:
// CHECK-NEXT:   func.return: 1
// CHECK-NEXT:   parc.add: 1
// CHECK-NEXT:   parc.matmul: 1
// CHECK-NEXT:   parc.relu: 1
func.func @model(%w: tensor<16x32xf32> {parc.role = "param", parc.name = "w"},
                 %b: tensor<32xf32> {parc.role = "param", parc.name = "b"},
                 %x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"})
    -> tensor<8x32xf32> {
  %0 = parc.matmul %x, %w : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = parc.add %0, %b : tensor<8x32xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %2 = parc.relu %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}
