// RUN: parc-opt %s -split-input-file --parc-propagate-sharding | FileCheck %s

// An explicit annotation beats a plan's on the same factor.
dist.mesh @mesh axes = [dp = 2, tp = 2]
// CHECK-LABEL: func.func @explicit_beats_plan
// CHECK: parc.add {{.*}}dist.shardings = [#dist.sharding<@mesh, {{\[\[}}dp], []]>]
func.func @explicit_beats_plan(
    %x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[dp], []]>},
    %y: tensor<8x8xf32> {dist.plan_sharding = #dist.sharding<@mesh, [[tp], []]>}) -> tensor<8x8xf32> {
  %0 = parc.add %x, %y : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
