
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
