
dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{argument #0 of @forward has rank 2 but its sharding lists 1 dimensions}}
func.func @forward(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp]]>}) -> tensor<8x8xf32> {
  %0 = parc.relu %x : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
