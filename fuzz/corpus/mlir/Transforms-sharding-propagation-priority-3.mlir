
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
