
dist.mesh @mesh axes = [tp = 4]
func.func @constraint(%x: tensor<6xf32>) {
  // expected-error @+1 {{'dist.constraint' op operand: dimension 0 of size 6 cannot be split over mesh axis 'tp' (4 shards do not divide it)}}
  %0 = dist.constraint %x : tensor<6xf32> to #dist.sharding<@mesh, [[tp]]>
  return
}
