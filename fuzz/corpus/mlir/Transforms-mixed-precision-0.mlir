// RUN: parc-opt %s -split-input-file --parc-mixed-precision | FileCheck %s
// RUN: parc-opt %s -split-input-file --parc-mixed-precision=type=f16 | FileCheck %s --check-prefix=F16
// RUN: %exit1 parc-opt %s -split-input-file --parc-mixed-precision --parc-mixed-precision 2>&1 | FileCheck %s --check-prefix=AGAIN
// RUN: parc-opt %s -split-input-file --parc-make-train-step="precision=bf16-mixed" | FileCheck %s --check-prefix=STEP
// RUN: %exit1 parc-opt %s -split-input-file --parc-mixed-precision=type=f8 2>&1 | FileCheck %s --check-prefix=BAD-TYPE
// RUN: %exit1 parc-opt %s -split-input-file --parc-make-train-step="precision=fp8" 2>&1 | FileCheck %s --check-prefix=BAD-STEP
// RUN: %exit1 parc-opt %s -split-input-file --parc-make-train-step --parc-mixed-precision 2>&1 | FileCheck %s --check-prefix=AFTER-STEP

// A weight read twice (tied) is cast at each use; activations are bf16 up
// to the loss, whose logits are cast back to f32; the constant stays f32
// and is cast where a bf16 op reads it.
// CHECK-LABEL: func.func @tied
// CHECK: %[[X:.*]] = parc.cast %arg0 : tensor<8x16xf32> -> tensor<8x16xbf16>
// CHECK: %[[W1:.*]] = parc.cast %arg1 : tensor<16x16xf32> -> tensor<16x16xbf16>
// CHECK: %[[H:.*]] = parc.matmul %[[X]], %[[W1]] : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
// CHECK: %[[G:.*]] = parc.gelu tanh %[[H]] : tensor<8x16xbf16>
// CHECK: %[[HALF:.*]] = parc.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[HALF16:.*]] = parc.cast %[[HALF]] : tensor<f32> -> tensor<bf16>
// CHECK: %[[S:.*]] = parc.mul %[[G]], %[[HALF16]] : tensor<8x16xbf16>, tensor<bf16> -> tensor<8x16xbf16>
// CHECK: %[[W2:.*]] = parc.cast %arg1 : tensor<16x16xf32> -> tensor<16x16xbf16>
// CHECK: %[[L:.*]] = parc.matmul %[[S]], %[[W2]] : tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
// CHECK: %[[L32:.*]] = parc.cast %[[L]] : tensor<8x16xbf16> -> tensor<8x16xf32>
// CHECK: %[[LOSS:.*]] = parc.cross_entropy %[[L32]], %arg2 : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
// What reads the loss stays f32.
// CHECK: %[[TWICE:.*]] = parc.add %[[LOSS]], %[[LOSS]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK: %[[OUT:.*]] = parc.cast %[[S]] : tensor<8x16xbf16> -> tensor<8x16xf32>
// CHECK: return %[[TWICE]], %[[OUT]] : tensor<f32>, tensor<8x16xf32>
// F16-LABEL: func.func @tied
// F16: parc.matmul {{.*}} : tensor<8x16xf16>, tensor<16x16xf16> -> tensor<8x16xf16>

// The train step stores the weight in bf16 and its f32 master copy as
// optimizer state, starting from the weight; the forward pass reads the
// bf16 weight itself, its two uses' gradients add in bf16, and the update
// widens the sum, steps the master and rounds it into the weight's next
// value.
// STEP-LABEL: func.func @tied
// STEP-SAME: %arg1: tensor<16x16xbf16> {parc.name = "w", parc.role = "param"}
// STEP-SAME: %[[MASTER:arg[0-9]+]]: tensor<16x16xf32> {parc.init_from = "w", parc.name = "w.master", parc.role = "optstate"}
// STEP-SAME: -> (tensor<f32> {parc.name = "loss"}, tensor<8x16xf32> {parc.name = "hidden"}, tensor<16x16xbf16> {parc.name = "w"}, tensor<16x16xf32> {parc.name = "w.master"}
// STEP-SAME: parc.precision = "bf16-mixed"
// STEP: parc.matmul %{{.*}}, %arg1 {{.*}}: tensor<8x16xbf16>, tensor<16x16xbf16> -> tensor<8x16xbf16>
// STEP: %[[DW:.*]] = parc.add %{{.*}}, %{{.*}} {parc.phase = "backward"} : tensor<16x16xbf16>, tensor<16x16xbf16> -> tensor<16x16xbf16>
// STEP: %[[DW32:.*]] = parc.cast %[[DW]] {parc.phase = "update"} : tensor<16x16xbf16> -> tensor<16x16xf32>
// STEP: %[[NEW:.*]], %{{.*}}, %{{.*}} = parc.adamw_update %[[MASTER]], %[[DW32]]
// STEP: %[[W:.*]] = parc.cast %[[NEW]] {parc.phase = "update"} : tensor<16x16xf32> -> tensor<16x16xbf16>
// STEP: return %{{.*}}, %{{.*}}, %[[W]], %[[NEW]],
func.func @tied(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
                %w: tensor<16x16xf32> {parc.role = "param", parc.name = "w"},
                %y: tensor<8xi64> {parc.role = "label", parc.name = "labels"})
    -> (tensor<f32> {parc.name = "loss"}, tensor<8x16xf32> {parc.name = "hidden"}) {
  %0 = parc.matmul %x, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %1 = parc.gelu tanh %0 : tensor<8x16xf32>
  %half = parc.constant dense<0.5> : tensor<f32>
  %2 = parc.mul %1, %half : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf32>
  %3 = parc.matmul %2, %w : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %4 = parc.cross_entropy %3, %y : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
  %5 = parc.add %4, %4 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %5, %2 : tensor<f32>, tensor<8x16xf32>
}
