
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
