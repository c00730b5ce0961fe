
// An op that stores no f32 result reads f32 as it is: a cast to integers
// sees the exact values.
// CHECK-LABEL: func.func @to_integers
// CHECK: parc.cast %arg0 : tensor<4xf32> -> tensor<4xi64>
// CHECK: %[[X:.*]] = parc.cast %arg0 : tensor<4xf32> -> tensor<4xbf16>
// CHECK: parc.mul %[[X]], %{{.*}} : tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
func.func @to_integers(%x: tensor<4xf32> {parc.role = "input", parc.name = "x"},
                       %w: tensor<4xf32> {parc.role = "param", parc.name = "w"})
    -> (tensor<f32> {parc.name = "loss"}, tensor<4xi64> {parc.name = "ids"}) {
  %0 = parc.cast %x : tensor<4xf32> -> tensor<4xi64>
  %1 = parc.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = parc.reduce_sum %1 [0] : tensor<4xf32> -> tensor<f32>
  return %2, %0 : tensor<f32>, tensor<4xi64>
}

// BAD-TYPE: error: --parc-mixed-precision: type must be bf16 or f16, got 'f8'
// BAD-STEP: error: --parc-make-train-step: precision must be f32, bf16-mixed or f16-mixed, got 'fp8'
// AFTER-STEP: error: mixed precision is decided before the gradients, and this op is part of a train step's backward pass or update (make the step with --parc-make-train-step=precision=bf16-mixed)
// AGAIN: error: @tied is in mixed precision already (parc.precision = "bf16-mixed")
