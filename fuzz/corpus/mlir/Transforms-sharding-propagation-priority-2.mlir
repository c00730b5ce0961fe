
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
