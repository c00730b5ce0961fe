// A log-sum-exp split over its reduced axis: each rank reduces its block,
// and the blocks combine as m + log(sum_r exp(l_r - m)) through a max and a
// sum all-reduce of the result's size; the input is never gathered.
// RUN: parc-opt %s --parc-propagate-sharding --parc-partition -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: parc-run --reference %s --out %t.serial
// RUN: parc-run --reference --simulate-ranks %t.mlir --out %t.ranks
// RUN: %python %compare %t.serial %t.ranks
dist.mesh @mesh axes = [dp = 2, tp = 2]
// CHECK-LABEL: func.func @normalizer
// CHECK-NOT: dist.all_gather
// CHECK: %[[LOCAL:.*]] = parc.reduce_log_sum_exp %{{.*}} [1, 2] keepdims : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT: %[[MAX:.*]] = dist.all_reduce max %[[LOCAL]] on @mesh ["tp"]
// CHECK-NEXT: %[[SHIFTED:.*]] = parc.sub %[[LOCAL]], %[[MAX]]
// CHECK-NEXT: %[[EXP:.*]] = parc.exp %[[SHIFTED]]
// CHECK-NEXT: %[[SUM:.*]] = dist.all_reduce sum %[[EXP]] on @mesh ["tp"]
// CHECK-NEXT: %[[LOG:.*]] = parc.log %[[SUM]]
// CHECK-NEXT: parc.add %[[LOG]], %[[MAX]]
// CHECK-NOT: dist.all_gather
// CHECK: return
func.func @normalizer(
    %x: tensor<4x3x8xf32> {parc.role = "input", parc.name = "x",
                           parc.init = #parc.init<uniform(-40, 40)>,
                           dist.sharding = #dist.sharding<@mesh, [[dp], [], [tp]]>})
    -> (tensor<4x1x1xf32> {parc.name = "lse",
                           dist.sharding = #dist.sharding<@mesh, [[dp], [], []]>}) {
  %0 = parc.reduce_log_sum_exp %x [1, 2] keepdims : tensor<4x3x8xf32> -> tensor<4x1x1xf32>
  return %0 : tensor<4x1x1xf32>
}
