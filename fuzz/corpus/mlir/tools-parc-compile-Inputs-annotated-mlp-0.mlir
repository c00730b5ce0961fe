func.func @forward(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
                   %w1: tensor<16x32xf32> {parc.role = "param", parc.name = "w1", dist.sharding = #dist.sharding<@mesh, [[], [tp]]>},
                   %w2: tensor<32x16xf32> {parc.role = "param", parc.name = "w2"})
    -> (tensor<8x16xf32> {parc.name = "y"}) {
  %0 = parc.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = parc.relu %0 : tensor<8x32xf32>
  %2 = parc.matmul %1, %w2 : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
