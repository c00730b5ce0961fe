
dist.mesh @mesh axes = [tp = 4]
dist.mesh @other axes = [tp = 2]
// expected-error @+1 {{argument #1 of @forward uses mesh @other but other annotations use @mesh}}
func.func @forward(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>},
                   %y: tensor<8x8xf32> {dist.sharding = #dist.sharding<@other, [[tp], []]>}) -> tensor<8x8xf32> {
  %0 = parc.add %x, %y : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
