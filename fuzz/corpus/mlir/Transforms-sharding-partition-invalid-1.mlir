
dist.mesh @mesh axes = [tp = 2]
func.func @count(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {dist.mesh = @mesh} {
  // expected-error @+1 {{'parc.relu' op has 2 entries in 'dist.shardings' for 1 results}}
  %0 = parc.relu %x {dist.shardings = [#dist.sharding<@mesh, [[], []]>, #dist.sharding<@mesh, [[], []]>]} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
