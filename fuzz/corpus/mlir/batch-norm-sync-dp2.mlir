// RUN: parc-opt %s --parc-lower-batch-norm | FileCheck %s
// RUN: parc-opt %s --parc-lower-batch-norm --parc-verify-model -o /dev/null

// Two groups: the batch splits into a leading dimension that the
// statistics keep; the first group's statistics are a sum weighted [1, 0].
// CHECK-LABEL: func.func @groups
func.func @groups(%x: tensor<4x3x2x2xf32> {parc.name = "x", parc.role = "input"},
                  %g: tensor<3xf32> {parc.name = "g", parc.role = "param"},
                  %b: tensor<3xf32> {parc.name = "b", parc.role = "param"})
    -> (tensor<4x3x2x2xf32> {parc.name = "y"}, tensor<3xf32> {parc.name = "mean"},
        tensor<3xf32> {parc.name = "var"}) {
  // CHECK: %[[X:.*]] = parc.reshape %arg0 : tensor<4x3x2x2xf32> -> tensor<2x2x3x2x2xf32>
  // Means are sums over 8 (values per group and channel): a sum over a
  // split batch is a partial sum, where a reduce_mean would gather it.
  // CHECK: %[[EIGHT:.*]] = parc.constant dense<8.000000e+00> : tensor<f32>
  // CHECK: %[[SUM:.*]] = parc.reduce_sum %[[X]] [1, 3, 4] keepdims : tensor<2x2x3x2x2xf32> -> tensor<2x1x3x1x1xf32>
  // CHECK: %[[MEAN:.*]] = parc.div %[[SUM]], %[[EIGHT]]
  // CHECK: parc.sub %[[X]], %[[MEAN]]
  // Unbiased: times 8 / 7.
  // CHECK: parc.constant dense<1.14285719> : tensor<f32>
  // CHECK: parc.constant dense<{{\[\[\[\[\[}}1.000000e+00]]]], {{\[\[\[\[}}0.000000e+00]]]]]> : tensor<2x1x1x1x1xf32>
  // CHECK: parc.reshape %{{.*}} : tensor<2x2x3x2x2xf32> -> tensor<4x3x2x2xf32>
  // CHECK-NOT: parc.batch_norm
  %y, %mean, %var = parc.batch_norm %x, %g, %b eps = 1.0e-5 groups = 2 : tensor<4x3x2x2xf32>, tensor<3xf32>
  return %y, %mean, %var : tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
}

// One group: the whole batch, no reshape (SyncBatchNorm's statistics, which a
// split batch sums over the ranks).
// CHECK-LABEL: func.func @whole_batch
func.func @whole_batch(%x: tensor<4x3x2x2xf32> {parc.name = "x", parc.role = "input"},
                       %g: tensor<3xf32> {parc.name = "g", parc.role = "param"},
                       %dy: tensor<4x3x2x2xf32> {parc.name = "dy", parc.role = "input"})
    -> (tensor<4x3x2x2xf32> {parc.name = "dx"}, tensor<3xf32> {parc.name = "dg"},
        tensor<3xf32> {parc.name = "db"}) {
  // CHECK-NOT: parc.reshape %arg0
  // CHECK: parc.reduce_sum %arg0 [0, 2, 3] keepdims : tensor<4x3x2x2xf32> -> tensor<1x3x1x1xf32>
  // CHECK: parc.reduce_sum %arg2 [0, 2, 3] : tensor<4x3x2x2xf32> -> tensor<3xf32>
  // CHECK-NOT: parc.reduce_mean
  // CHECK-NOT: parc.batch_norm_grad
  %dx, %dg, %db = parc.batch_norm_grad %x, %g, %dy eps = 1.0e-5 : tensor<4x3x2x2xf32>, tensor<3xf32>
  return %dx, %dg, %db : tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>
}

// The gradient of a lowered forward op on the same input reads its
// statistics: one square root, and only the forward pass's two sums of the
// input's squares and values.
// CHECK-LABEL: func.func @reuse
func.func @reuse(%x: tensor<4x3x2x2xf32> {parc.name = "x", parc.role = "input"},
                 %g: tensor<3xf32> {parc.name = "g", parc.role = "param"},
                 %dy: tensor<4x3x2x2xf32> {parc.name = "dy", parc.role = "input"})
    -> (tensor<4x3x2x2xf32> {parc.name = "y"}, tensor<4x3x2x2xf32> {parc.name = "dx"}) {
  // CHECK: parc.sqrt
  // CHECK-NOT: parc.sqrt
  // CHECK: return
  %y, %mean, %var = parc.batch_norm %x, %g, %g eps = 1.0e-5 groups = 2 : tensor<4x3x2x2xf32>, tensor<3xf32>
  %dx, %dg, %db = parc.batch_norm_grad %x, %g, %dy eps = 1.0e-5 groups = 2 : tensor<4x3x2x2xf32>, tensor<3xf32>
  return %y, %dx : tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>
}

//--plan
{
  "mesh": {"dp": 2},
  "shardings": {"images": [["dp"], [], [], []], "labels": [["dp"]]},
  "data_parallel": {"sync_batch_norm": true}
}
