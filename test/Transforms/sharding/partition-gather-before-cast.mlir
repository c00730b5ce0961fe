// A bf16 gradient split over tp and cast up for an update that reads it
// whole is gathered in bf16 and cast after the gather (half the bytes of
// gathering the f32 copy), once per use.
// RUN: parc-opt %s --parc-propagate-sharding --parc-partition | FileCheck %s

dist.mesh @mesh axes = [tp = 4]

// CHECK-LABEL: func.func @step
// CHECK: %[[NARROW:.*]] = dist.all_gather %{{.*}} on @mesh ["tp"] dim = 0 : tensor<2x8xbf16> -> tensor<8x8xbf16>
// CHECK-NEXT: %[[WIDE:.*]] = parc.cast %[[NARROW]] : tensor<8x8xbf16> -> tensor<8x8xf32>
// CHECK-NOT: dist.all_gather
// CHECK: parc.add %{{.*}}, %[[WIDE]] : tensor<8x8xf32>
// CHECK: return
func.func @step(%g: tensor<8x8xbf16> {parc.role = "input", parc.name = "g",
                                      dist.sharding = #dist.sharding<@mesh, [[tp], []]>},
                %p: tensor<8x8xf32> {parc.role = "param", parc.name = "p",
                                     dist.sharding = #dist.sharding<@mesh, [[], []]>})
    -> tensor<8x8xf32> {
  %wide = parc.cast %g : tensor<8x8xbf16> -> tensor<8x8xf32>
  %whole = dist.constraint %wide : tensor<8x8xf32> to <@mesh, [[], []]> {dist.from_plan, dist.plan_use}
  %sum = parc.add %p, %whole : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %sum : tensor<8x8xf32>
}
