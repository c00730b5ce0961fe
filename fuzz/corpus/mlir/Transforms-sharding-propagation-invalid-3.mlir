
dist.mesh @mesh axes = [dp = 2, tp = 2]
func.func @forward(%x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, [[], [tp]]>},
                   %w: tensor<16x4xf32> {dist.sharding = #dist.sharding<@mesh, [[dp], []]>}) -> tensor<8x4xf32> {
  // expected-error @+1 {{'parc.matmul' op has conflicting explicit shardings: operand #0 dimension 1 is split over [tp] but operand #1 dimension 0 is split over [dp]}}
  %0 = parc.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
