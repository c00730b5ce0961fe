
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
