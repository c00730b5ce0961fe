
dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{mesh axis 'tp' is used twice in one sharding (again in dimension 1)}}
func.func @axis_twice(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], [tp]]>}) {
  return
}
