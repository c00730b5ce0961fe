dist.mesh @mesh axes = [tp = 4]
func.func @forward(
                   %x: tensor<6x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>}) -> tensor<6x8xf32> {
  %0 = parc.relu %x : tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
