// A plan's pin of one use (dist.plan_use) decides the factors its reader
// contracts, whole included, as propagation resolved them: the second
// matmul contracts with the weight whole, so the split activation is
// gathered, not the gathered weight sliced again and the product
// all-reduced.
// RUN: parc-opt %s --parc-propagate-sharding --parc-partition | FileCheck %s

dist.mesh @mesh axes = [tp = 4]

// CHECK-LABEL: func.func @forward
// CHECK: parc.relu %{{.*}} : tensor<8x8xf32>
// CHECK-DAG: %[[WEIGHT:.*]] = dist.all_gather %{{.*}} on @mesh ["tp"] dim = 0 : tensor<8x16xf32> -> tensor<32x16xf32>
// CHECK-DAG: %[[INPUT:.*]] = dist.all_gather %{{.*}} on @mesh ["tp"] dim = 1 : tensor<8x8xf32> -> tensor<8x32xf32>
// CHECK: parc.matmul %[[INPUT]], %[[WEIGHT]] : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
// CHECK-NOT: dist.all_slice
// CHECK-NOT: dist.all_reduce
// CHECK: return
func.func @forward(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
                   %w1: tensor<16x32xf32> {parc.role = "param", parc.name = "fc1.weight",
                                           dist.sharding = #dist.sharding<@mesh, [[], [tp]]>},
                   %w2: tensor<32x16xf32> {parc.role = "param", parc.name = "fc2.weight",
                                           dist.plan_sharding = #dist.sharding<@mesh, [[tp], []]>})
    -> tensor<8x16xf32> {
  %h = parc.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %r = parc.relu %h : tensor<8x32xf32>
  %w = dist.constraint %w2 : tensor<32x16xf32> to <@mesh, [[], []]> {dist.from_plan, dist.plan_use}
  %y = parc.matmul %r, %w : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}
