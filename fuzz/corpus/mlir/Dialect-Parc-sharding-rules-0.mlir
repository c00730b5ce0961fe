// RUN: parc-opt %s -parc-print-sharding-rules | FileCheck %s
// Every op's factor-based sharding rule, pinned in one place.

// CHECK-LABEL: func.func @rules
func.func @rules(%x: tensor<2x8x16xf32>, %w: tensor<16x32xf32>, %wt: tensor<32x16xf32>, %b: tensor<32xf32>,
                 %g: tensor<16xf32>, %t: tensor<100x16xf32>, %ids: tensor<2x8xi64>,
                 %q: tensor<2x4x8x4xf32>, %kv: tensor<2x4x6x4xf32>, %sq: tensor<6x4xf32>) {
  // CHECK: parc.matmul {{.*}}parc.sharding_rule = "([i, j, l], [l, k]) -> ([i, j, k]) {i=2, j=8, k=32, l=16 reduction}"
  %0 = parc.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x32xf32> -> tensor<2x8x32xf32>
  // CHECK: parc.matmul {{.*}}parc.sharding_rule = "([i, j, l], [k, l]) -> ([i, j, k]) {i=2, j=8, k=32, l=16 reduction}"
  %1 = parc.matmul %x, %wt transpose_rhs : tensor<2x8x16xf32>, tensor<32x16xf32> -> tensor<2x8x32xf32>
  // CHECK: parc.add {{.*}}parc.sharding_rule = "([i, j, k], [k]) -> ([i, j, k]) {i=2, j=8, k=32}"
  %2 = parc.add %0, %b : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  // CHECK: parc.gelu {{.*}}parc.sharding_rule = "([i, j, k]) -> ([i, j, k]) {i=2, j=8, k=32}"
  %3 = parc.gelu tanh %2 : tensor<2x8x32xf32>
  // CHECK: parc.softmax {{.*}}parc.sharding_rule = "([i, j, k]) -> ([i, j, k]) {i=2, j=8, k=32 replicated}"
  %4 = parc.softmax %3 axis = 2 : tensor<2x8x32xf32>
  // CHECK: parc.layer_norm {{.*}}parc.sharding_rule = "([i, j, k], [k], [k]) -> ([i, j, k]) {i=2, j=8, k=16 replicated}"
  %5 = parc.layer_norm %x, %g, %g eps = 1.0e-5 : tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>
  // CHECK: parc.rms_norm {{.*}}parc.sharding_rule = "([i, j, k], [k]) -> ([i, j, k]) {i=2, j=8, k=16 replicated}"
  %6 = parc.rms_norm %x, %g eps = 1.0e-6 : tensor<2x8x16xf32>, tensor<16xf32>
  // CHECK: parc.embedding {{.*}}parc.sharding_rule = "([k, l], [i, j]) -> ([i, j, l]) {i=2, j=8, k=100 reduction local-rewrite, l=16}"
  %7 = parc.embedding %t, %ids : tensor<100x16xf32>, tensor<2x8xi64> -> tensor<2x8x16xf32>
  // CHECK: parc.reshape {{.*}}parc.sharding_rule = "([i, j, k*l]) -> ([i, j, k, l]) {i=2, j=8, k=4, l=4}"
  %8 = parc.reshape %7 : tensor<2x8x16xf32> -> tensor<2x8x4x4xf32>
  // CHECK: parc.reshape {{.*}}parc.sharding_rule = "([i, j*k, l]) -> ([i, j, k, _, l]) {i=2, j=4, k=2, l=16}"
  %9 = parc.reshape %7 : tensor<2x8x16xf32> -> tensor<2x4x2x1x16xf32>
  // A shuffle of dimensions has no common refinement: both stay whole.
  // CHECK: parc.reshape {{.*}}parc.sharding_rule = "([i, j]) -> ([k, l]) {i=6 replicated, j=4 replicated, k=4 replicated, l=6 replicated}"
  %r = parc.reshape %sq : tensor<6x4xf32> -> tensor<4x6xf32>
  // CHECK: parc.transpose {{.*}}parc.sharding_rule = "([i, j, k, l]) -> ([i, k, j, l]) {i=2, j=8, k=4, l=4}"
  %10 = parc.transpose %8 [0, 2, 1, 3] : tensor<2x8x4x4xf32> -> tensor<2x4x8x4xf32>
  // CHECK: parc.reduce_sum {{.*}}parc.sharding_rule = "([i, j, k]) -> ([i, _, _]) {i=2, j=8 reduction, k=16 reduction}"
  %11 = parc.reduce_sum %x [1, 2] keepdims : tensor<2x8x16xf32> -> tensor<2x1x1xf32>
  // CHECK: parc.reduce_mean {{.*}}parc.sharding_rule = "([i, j, k]) -> ([i, k]) {i=2, j=8 replicated, k=16}"
  %12 = parc.reduce_mean %x [1] : tensor<2x8x16xf32> -> tensor<2x16xf32>
  // Its reduced axes split through the op's own combination of the blocks.
  // CHECK: parc.reduce_log_sum_exp {{.*}}parc.sharding_rule = "([i, j, k]) -> ([j]) {i=2 local-rewrite, j=8, k=16 local-rewrite}"
  %lse = parc.reduce_log_sum_exp %x [0, 2] : tensor<2x8x16xf32> -> tensor<8xf32>
  // CHECK: parc.concat {{.*}}parc.sharding_rule = "([i, j, k], [i, j, l]) -> ([i, j, m]) {i=2, j=8, k=16 replicated, l=16 replicated, m=32 replicated}"
  %13 = parc.concat %x, %x axis = 2 : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x32xf32>
  // CHECK: parc.slice {{.*}}parc.sharding_rule = "([i, j, k]) -> ([i, j, l]) {i=2, j=8, k=16 replicated, l=4 replicated}"
  %14 = parc.slice %x offsets [0, 0, 4] sizes [2, 8, 4] strides [1, 1, 1] : tensor<2x8x16xf32> -> tensor<2x8x4xf32>
  // CHECK: parc.constant {{.*}}parc.sharding_rule = "() -> ([i]) {i=2 replicated}"
  %15 = parc.constant dense<1.0> : tensor<2xf32>
  // CHECK: parc.attention {{.*}}parc.sharding_rule = "([i, j, k, m], [i, j, l, m], [i, j, l, n]) -> ([i, j, k, n]) {i=2, j=4, k=8 replicated, l=6 replicated, m=4 replicated, n=4 replicated}"
  %16 = parc.attention %q, %kv, %kv causal scale = 0.5 : tensor<2x4x8x4xf32>, tensor<2x4x6x4xf32>, tensor<2x4x6x4xf32>
  // CHECK: parc.cross_entropy {{.*}}parc.sharding_rule = "([i, j, k], [i, j]) -> ([]) {i=2 reduction local-rewrite, j=8 reduction local-rewrite, k=16 reduction local-rewrite}"
  %17 = parc.cross_entropy %x, %ids : tensor<2x8x16xf32>, tensor<2x8xi64> -> tensor<f32>
  // Grouped-query heads are [kv heads, group]; a padding mask spans batch
  // and keys only.
  %gkv = parc.slice %kv offsets [0, 0, 0, 0] sizes [2, 2, 6, 4] strides [1, 1, 1, 1] : tensor<2x4x6x4xf32> -> tensor<2x2x6x4xf32>
  %pad = parc.constant dense<0.0> : tensor<2x1x1x6xf32>
  // CHECK: parc.attention {{.*}}parc.sharding_rule = "([i, j*k, l, n], [i, j, m, n], [i, j, m, o], [i, _, _, m]) -> ([i, j*k, l, o]) {i=2, j=2, k=2, l=8 replicated, m=6 replicated, n=4 replicated, o=4 replicated}"
  %18 = parc.attention %q, %gkv, %gkv mask %pad causal scale = 0.5 : tensor<2x4x8x4xf32>, tensor<2x2x6x4xf32>, tensor<2x2x6x4xf32>, tensor<2x1x1x6xf32>
  return
}

// Convolutions: batch and filters parallel, input channels summed; the
// gradients sum over the filters (input) and the batch (weight). Grouped
// convolutions keep channels and filters whole.
// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x: tensor<2x4x5x5xf32>, %w: tensor<6x4x3x3xf32>, %g: tensor<2x6x3x3xf32>,
                        %wg: tensor<6x2x3x3xf32>, %b4: tensor<4xf32>) {
  // CHECK: parc.conv2d {{.*}}parc.sharding_rule = "([i, k, l, m], [j, k, n, o]) -> ([i, j, p, q]) {i=2, j=6, k=4 reduction, l=5 replicated, m=5 replicated, n=3 replicated, o=3 replicated, p=3 replicated, q=3 replicated}"
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<2x4x5x5xf32>, tensor<6x4x3x3xf32>
  // CHECK: parc.conv2d_input_grad {{.*}}parc.sharding_rule = "([j, k, n, o], [i, j, p, q]) -> ([i, k, l, m]) {i=2, j=6 reduction, k=4, l=5 replicated, m=5 replicated, n=3 replicated, o=3 replicated, p=3 replicated, q=3 replicated}"
  %1 = parc.conv2d_input_grad %w, %g strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<6x4x3x3xf32>, tensor<2x6x3x3xf32> -> tensor<2x4x5x5xf32>
  // CHECK: parc.conv2d_weight_grad {{.*}}parc.sharding_rule = "([i, k, l, m], [i, j, p, q]) -> ([j, k, n, o]) {i=2 reduction, j=6, k=4, l=5 replicated, m=5 replicated, n=3 replicated, o=3 replicated, p=3 replicated, q=3 replicated}"
  %2 = parc.conv2d_weight_grad %x, %g strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<2x4x5x5xf32>, tensor<2x6x3x3xf32> -> tensor<6x4x3x3xf32>
  // CHECK: parc.conv2d {{.*}}groups 2 {parc.sharding_rule = "([i, k, m, n], [j, l, o, p]) -> ([i, j, q, r]) {i=2, j=6 replicated, k=4 replicated, l=2 replicated,
  %3 = parc.conv2d %x, %wg strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 2 : tensor<2x4x5x5xf32>, tensor<6x2x3x3xf32>
  // The batch is summed over for the statistics (and gamma's and beta's
  // gradients), which batch_norm's lowering writes out before partitioning.
  // CHECK: parc.batch_norm {{.*}}parc.sharding_rule = "([i, j, k, l], [j], [j]) -> ([i, j, k, l], [j], [j]) {i=2 reduction local-rewrite, j=4, k=5 replicated, l=5 replicated}"
  %y, %mean, %var = parc.batch_norm %x, %b4, %b4 eps = 1.0e-5 : tensor<2x4x5x5xf32>, tensor<4xf32>
  // CHECK: parc.batch_norm_grad {{.*}}parc.sharding_rule = "([i, j, k, l], [j], [i, j, k, l]) -> ([i, j, k, l], [j], [j]) {i=2 reduction local-rewrite, j=4, k=5 replicated, l=5 replicated}"
  %dx, %dg, %db = parc.batch_norm_grad %x, %b4, %x eps = 1.0e-5 : tensor<2x4x5x5xf32>, tensor<4xf32>
  return
}

// matrix_dims: one factor per dimension of each group; GPT's QKV projection
// ([b, s, h] x [h, 3, H, d]), its input's gradient (contracting (3, H, d))
// and its weight's (summed over the batch).
// CHECK-LABEL: func.func @grouped_matmul
func.func @grouped_matmul(%x: tensor<2x8x16xf32>, %w: tensor<16x3x4x4xf32>, %g: tensor<2x8x3x4x4xf32>) {
  // CHECK: parc.matmul {{.*}}parc.sharding_rule = "([i, j, n], [n, k, l, m]) -> ([i, j, k, l, m]) {i=2, j=8, k=3, l=4, m=4, n=16 reduction}"
  %0 = parc.matmul %x, %w matrix_dims [1, 1, 3] : tensor<2x8x16xf32>, tensor<16x3x4x4xf32> -> tensor<2x8x3x4x4xf32>
  // CHECK: parc.matmul {{.*}}parc.sharding_rule = "([i, j, l, m, n], [k, l, m, n]) -> ([i, j, k]) {i=2, j=8, k=16, l=3 reduction, m=4 reduction, n=4 reduction}"
  %1 = parc.matmul %g, %w transpose_rhs matrix_dims [1, 3, 1] : tensor<2x8x3x4x4xf32>, tensor<16x3x4x4xf32> -> tensor<2x8x16xf32>
  // CHECK: parc.matmul {{.*}}parc.sharding_rule = "([i, n, j], [i, n, k, l, m]) -> ([j, k, l, m]) {i=2 reduction, j=16, k=3, l=4, m=4, n=8 reduction}"
  %2 = parc.matmul %x, %g transpose_lhs contract_batch matrix_dims [1, 1, 3] : tensor<2x8x16xf32>, tensor<2x8x3x4x4xf32> -> tensor<16x3x4x4xf32>
  return
}
