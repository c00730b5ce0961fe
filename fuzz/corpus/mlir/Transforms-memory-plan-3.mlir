
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
