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

// -----

// Among equal priorities, the choice that moves fewer bytes wins: following
// the [64, 64] operand leaves only the [64] vector to reshard.
dist.mesh @mesh axes = [dp = 2, tp = 2]
// CHECK-LABEL: func.func @fewer_bytes
// CHECK: parc.add {{.*}}dist.shardings = [#dist.sharding<@mesh, {{\[\[}}], [tp]]>]
func.func @fewer_bytes(
    %a: tensor<64x64xf32> {dist.plan_sharding = #dist.sharding<@mesh, [[], [tp]]>},
    %b: tensor<64xf32> {dist.plan_sharding = #dist.sharding<@mesh, [[dp]]>}) -> tensor<64x64xf32> {
  %0 = parc.add %a, %b : tensor<64x64xf32>, tensor<64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A tie in bytes breaks deterministically, by the smaller axis list.
dist.mesh @mesh axes = [dp = 2, tp = 2]
// CHECK-LABEL: func.func @tie
// CHECK: parc.add {{.*}}dist.shardings = [#dist.sharding<@mesh, {{\[\[}}], [dp]]>]
func.func @tie(
    %a: tensor<8x8xf32> {dist.plan_sharding = #dist.sharding<@mesh, [[], [tp]]>},
    %b: tensor<8x8xf32> {dist.plan_sharding = #dist.sharding<@mesh, [[], [dp]]>}) -> tensor<8x8xf32> {
  %0 = parc.add %a, %b : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// A layer norm keeps its normalized axis whole: a split of the features does
// not pass through it, a split of the rows does.
dist.mesh @mesh axes = [tp = 2]
// CHECK-LABEL: func.func @layer_norm
// CHECK: parc.layer_norm {{.*}}dist.shardings = [#dist.sharding<@mesh, {{\[\[}}tp], []]>]
func.func @layer_norm(
    %x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>},
    %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = parc.layer_norm %x, %g, %b eps = 1.0e-5 : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32>
  return %0 : tensor<8x16xf32>
}
