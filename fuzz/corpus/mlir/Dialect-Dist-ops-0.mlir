// RUN: parc-opt %s | FileCheck %s
// RUN: parc-opt %s | parc-opt | FileCheck %s

// CHECK: dist.mesh @mesh axes = [dp = 2, tp = 4]
dist.mesh @mesh axes = [dp = 2, tp = 4]

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: #dist.sharding<@mesh, {{\[\[}}dp], [], [tp]]>
// CHECK-SAME: #dist.sharding<@mesh, {{\[\[}}], []], partial [tp]>
func.func @collectives(%x: tensor<4x8x16xf32> {dist.sharding = #dist.sharding<@mesh, [[dp], [], [tp]]>},
                       %p: tensor<4x8xf32> {dist.sharding = #dist.sharding<@mesh, [[], []], partial [tp]>}) {
  // CHECK: dist.all_reduce sum %{{.*}} on @mesh ["tp"] : tensor<4x8xf32>
  %0 = dist.all_reduce sum %p on @mesh ["tp"] : tensor<4x8xf32>
  // CHECK: dist.all_reduce max %{{.*}} on @mesh ["dp", "tp"] : tensor<4x8xf32>
  %1 = dist.all_reduce max %p on @mesh ["dp", "tp"] : tensor<4x8xf32>
  // CHECK: dist.all_gather %{{.*}} on @mesh ["tp"] dim = 2 : tensor<4x8x16xf32> -> tensor<4x8x64xf32>
  %2 = dist.all_gather %x on @mesh ["tp"] dim = 2 : tensor<4x8x16xf32> -> tensor<4x8x64xf32>
  // CHECK: dist.reduce_scatter %{{.*}} on @mesh ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  %3 = dist.reduce_scatter %p on @mesh ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x2xf32>
  // CHECK: dist.all_to_all %{{.*}} on @mesh ["tp"] split = 1 concat = 2 : tensor<4x8x16xf32> -> tensor<4x2x64xf32>
  %4 = dist.all_to_all %x on @mesh ["tp"] split = 1 concat = 2 : tensor<4x8x16xf32> -> tensor<4x2x64xf32>
  // CHECK: dist.all_slice %{{.*}} on @mesh ["dp"] dim = 0 : tensor<4x8x16xf32> -> tensor<2x8x16xf32>
  %5 = dist.all_slice %x on @mesh ["dp"] dim = 0 : tensor<4x8x16xf32> -> tensor<2x8x16xf32>
  // CHECK: dist.axis_index on @mesh ["dp", "tp"] : tensor<i64>
  %6 = dist.axis_index on @mesh ["dp", "tp"] : tensor<i64>
  // CHECK: dist.constraint %{{.*}} : tensor<4x8xf32> to <@mesh, {{\[\[}}tp], []]>
  %7 = dist.constraint %p : tensor<4x8xf32> to #dist.sharding<@mesh, [[tp], []]>
  // CHECK: dist.send %{{.*}} to @mesh["dp" = 1] channel 3 : tensor<4x8xf32>
  dist.send %p to @mesh["dp" = 1] channel 3 : tensor<4x8xf32>
  // CHECK: dist.recv from @mesh["dp" = 0] channel 3 : tensor<4x8xf32>
  %8 = dist.recv from @mesh["dp" = 0] channel 3 : tensor<4x8xf32>
  // CHECK: dist.send %{{.*}} to @mesh["tp" = 1, "dp" = 0] channel 4 : tensor<4x8xf32>
  dist.send %p to @mesh["tp" = 1, "dp" = 0] channel 4 : tensor<4x8xf32>
  return
}
