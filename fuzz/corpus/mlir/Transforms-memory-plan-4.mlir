
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
