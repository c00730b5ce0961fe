// RUN: parc-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: parc-opt %s | parc-opt | FileCheck %s

// CHECK-LABEL: func.func @linear_algebra
func.func @linear_algebra(%x: tensor<2x8x16xf32>, %w: tensor<32x16xf32>,
                          %a: tensor<4x3x2xbf16>, %b: tensor<3x5xbf16>,
                          %w2: tensor<16x4x8xf32>, %w3: tensor<16x32xf32>) -> (tensor<2x8x32xf32>, tensor<4x2x5xbf16>) {
  // CHECK: parc.matmul %{{.*}}, %{{.*}} transpose_rhs : tensor<2x8x16xf32>, tensor<32x16xf32> -> tensor<2x8x32xf32>
  %0 = parc.matmul %x, %w transpose_rhs : tensor<2x8x16xf32>, tensor<32x16xf32> -> tensor<2x8x32xf32>
  // CHECK: parc.matmul %{{.*}}, %{{.*}} transpose_lhs contract_batch : tensor<2x8x16xf32>, tensor<2x8x32xf32> -> tensor<16x32xf32>
  %dw = parc.matmul %x, %0 transpose_lhs contract_batch : tensor<2x8x16xf32>, tensor<2x8x32xf32> -> tensor<16x32xf32>
  // CHECK: parc.matmul %{{.*}}, %{{.*}} transpose_lhs : tensor<4x3x2xbf16>, tensor<3x5xbf16> -> tensor<4x2x5xbf16>
  %1 = parc.matmul %a, %b transpose_lhs : tensor<4x3x2xbf16>, tensor<3x5xbf16> -> tensor<4x2x5xbf16>
  // CHECK: parc.matmul %{{.*}}, %{{.*}} matrix_dims [1, 1, 2] : tensor<2x8x16xf32>, tensor<16x4x8xf32> -> tensor<2x8x4x8xf32>
  %2 = parc.matmul %x, %w2 matrix_dims [1, 1, 2] : tensor<2x8x16xf32>, tensor<16x4x8xf32> -> tensor<2x8x4x8xf32>
  // CHECK-NOT: matrix_dims
  // CHECK: parc.matmul %{{.*}}, %{{.*}} : tensor<2x8x16xf32>, tensor<16x32xf32>
  %3 = parc.matmul %x, %w3 matrix_dims [1, 1, 1] : tensor<2x8x16xf32>, tensor<16x32xf32> -> tensor<2x8x32xf32>
  return %0, %1 : tensor<2x8x32xf32>, tensor<4x2x5xbf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf16>, %y: tensor<3xf16>) -> tensor<2x3xf16> {
  // CHECK: parc.add %{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<3xf16> -> tensor<2x3xf16>
  %0 = parc.add %x, %y : tensor<2x3xf16>, tensor<3xf16> -> tensor<2x3xf16>
  // CHECK: parc.sub
  %1 = parc.sub %0, %y : tensor<2x3xf16>, tensor<3xf16> -> tensor<2x3xf16>
  // CHECK: parc.mul
  %2 = parc.mul %1, %x : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
  // CHECK: parc.div
  %3 = parc.div %2, %x : tensor<2x3xf16>, tensor<2x3xf16> -> tensor<2x3xf16>
  // CHECK: parc.neg %{{.*}} : tensor<2x3xf16>
  %4 = parc.neg %3 : tensor<2x3xf16>
  // CHECK: parc.exp
  %5 = parc.exp %4 : tensor<2x3xf16>
  // CHECK: parc.tanh
  %6 = parc.tanh %5 : tensor<2x3xf16>
  // CHECK: parc.relu
  %7 = parc.relu %6 : tensor<2x3xf16>
  // CHECK: parc.gelu tanh
  %8 = parc.gelu tanh %7 : tensor<2x3xf16>
  // CHECK: parc.gelu erf
  %9 = parc.gelu erf %8 : tensor<2x3xf16>
  // CHECK: parc.silu
  %10 = parc.silu %9 : tensor<2x3xf16>
  // CHECK: parc.sigmoid
  %11 = parc.sigmoid %10 : tensor<2x3xf16>
  return %11 : tensor<2x3xf16>
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  // CHECK: parc.softmax %{{.*}} axis = 1 : tensor<2x4x8xf32>
  %0 = parc.softmax %x axis = 1 : tensor<2x4x8xf32>
  // CHECK: parc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  %1 = parc.layer_norm %x, %g, %g eps = 1.0e-5 : tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>
  // CHECK: parc.rms_norm %{{.*}}, %{{.*}} eps = 9.9999999999999995E-7 : tensor<2x4x8xf32>, tensor<8xf32>
  %2 = parc.rms_norm %x, %g eps = 1.0e-6 : tensor<2x4x8xf32>, tensor<8xf32>
  return %0, %1, %2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// CHECK-LABEL: func.func @layout
func.func @layout(%t: tensor<100x16xf32>, %ids: tensor<2x8xi32>) -> (tensor<2x4x8x1xf32>, tensor<2x1xf32>, tensor<4x8xf32>) {
  // CHECK: parc.embedding %{{.*}}, %{{.*}} : tensor<100x16xf32>, tensor<2x8xi32> -> tensor<2x8x16xf32>
  %0 = parc.embedding %t, %ids : tensor<100x16xf32>, tensor<2x8xi32> -> tensor<2x8x16xf32>
  // CHECK: parc.reshape %{{.*}} : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  %1 = parc.reshape %0 : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  // CHECK: parc.transpose %{{.*}} [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  %2 = parc.transpose %1 [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  // CHECK: parc.slice %{{.*}} offsets [0, 0, 0, 1] sizes [2, 4, 8, 2] strides [1, 1, 1, 2] : tensor<2x4x8x4xf32> -> tensor<2x4x8x2xf32>
  %3 = parc.slice %2 offsets [0, 0, 0, 1] sizes [2, 4, 8, 2] strides [1, 1, 1, 2] : tensor<2x4x8x4xf32> -> tensor<2x4x8x2xf32>
  // CHECK: parc.concat %{{.*}}, %{{.*}} axis = 3 : tensor<2x4x8x2xf32>, tensor<2x4x8x4xf32> -> tensor<2x4x8x6xf32>
  %4 = parc.concat %3, %2 axis = 3 : tensor<2x4x8x2xf32>, tensor<2x4x8x4xf32> -> tensor<2x4x8x6xf32>
  // CHECK: parc.reduce_sum %{{.*}} [3] keepdims : tensor<2x4x8x6xf32> -> tensor<2x4x8x1xf32>
  %5 = parc.reduce_sum %4 [3] keepdims : tensor<2x4x8x6xf32> -> tensor<2x4x8x1xf32>
  // CHECK: parc.reduce_mean %{{.*}} [1, 2] : tensor<2x4x8x1xf32> -> tensor<2x1xf32>
  %6 = parc.reduce_mean %5 [1, 2] : tensor<2x4x8x1xf32> -> tensor<2x1xf32>
  // CHECK: parc.reduce_log_sum_exp %{{.*}} [0, 3] : tensor<2x4x8x6xf32> -> tensor<4x8xf32>
  %7 = parc.reduce_log_sum_exp %4 [0, 3] : tensor<2x4x8x6xf32> -> tensor<4x8xf32>
  return %5, %6, %7 : tensor<2x4x8x1xf32>, tensor<2x1xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @attention_and_loss
func.func @attention_and_loss(%q: tensor<2x4x8x16xf32>, %kv: tensor<2x4x12x16xf32>, %labels: tensor<2x4x8xi64>) -> tensor<f32> {
  // CHECK: parc.attention %{{.*}}, %{{.*}}, %{{.*}} causal scale = 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>
  %0 = parc.attention %q, %kv, %kv causal scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>
  // CHECK: parc.attention %{{.*}}, %{{.*}}, %{{.*}} scale = 1.000000e+00 :
  %1 = parc.attention %q, %kv, %kv scale = 1.0 : tensor<2x4x8x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>
  // Grouped-query heads and a padding mask broadcast over heads and queries.
  // CHECK: parc.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} causal scale = 2.500000e-01 : tensor<2x4x8x16xf32>, tensor<2x2x12x16xf32>, tensor<2x2x12x16xf32>, tensor<2x1x1x12xf32>
  %gkv = parc.slice %kv offsets [0, 0, 0, 0] sizes [2, 2, 12, 16] strides [1, 1, 1, 1] : tensor<2x4x12x16xf32> -> tensor<2x2x12x16xf32>
  %mask = parc.constant dense<0.0> : tensor<2x1x1x12xf32>
  %g = parc.attention %q, %gkv, %gkv mask %mask causal scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x2x12x16xf32>, tensor<2x2x12x16xf32>, tensor<2x1x1x12xf32>
  // CHECK: parc.cross_entropy %{{.*}}, %{{.*}} : tensor<2x4x8x16xf32>, tensor<2x4x8xi64> -> tensor<f32>
  %2 = parc.cross_entropy %1, %labels : tensor<2x4x8x16xf32>, tensor<2x4x8xi64> -> tensor<f32>
  return %2 : tensor<f32>
}

// CHECK-LABEL: func.func @constant
func.func @constant() -> tensor<2xi64> {
  // CHECK: parc.constant dense<[3, 4]> : tensor<2xi64>
  %0 = parc.constant dense<[3, 4]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func.func @init_attribute
// CHECK-SAME: #parc.init<normal(0.000000e+00, 2.000000e-02)>
// CHECK-SAME: #parc.init<uniform(0.000000e+00, 5.000000e+01)>
// CHECK-SAME: #parc.init<constant(1.000000e+00)>
func.func @init_attribute(
    %w: tensor<4xf32> {parc.init = #parc.init<normal(0.0, 0.02)>},
    %ids: tensor<4xi64> {parc.init = #parc.init<uniform(0, 50)>},
    %g: tensor<4xf32> {parc.init = #parc.init<constant(1.0)>}) {
  return
}

// CHECK-LABEL: func.func @imported_elementwise
func.func @imported_elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %c: tensor<2x1xi32>) -> (tensor<2x3xf32>, tensor<2x3xf16>) {
  // CHECK: parc.sqrt %{{.*}} : tensor<2x3xf32>
  %0 = parc.sqrt %x : tensor<2x3xf32>
  // CHECK: parc.erf %{{.*}} : tensor<2x3xf32>
  %1 = parc.erf %0 : tensor<2x3xf32>
  // CHECK: parc.pow %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %2 = parc.pow %1, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: parc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x1xi32>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %3 = parc.select %c, %2, %y : tensor<2x1xi32>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: parc.compare lt %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi32>
  %l = parc.compare lt %3, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi32>
  // CHECK: parc.compare eq %{{.*}}, %{{.*}} : tensor<2x1xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  %q = parc.compare eq %c, %l : tensor<2x1xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  // CHECK: parc.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xf16>
  %4 = parc.cast %3 : tensor<2x3xf32> -> tensor<2x3xf16>
  return %3, %4 : tensor<2x3xf32>, tensor<2x3xf16>
}
