
dist.mesh @mesh axes = [tp = 2]
// expected-error @+1 {{argument #0: dimension 0 of size 3 cannot be split over mesh axis 'tp' (2 shards do not divide it)}}
func.func @argument(%x: tensor<3x4xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>}) -> tensor<3x4xf32> attributes {dist.mesh = @mesh} {
  %0 = parc.relu %x : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
