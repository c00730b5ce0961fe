dist.mesh @mesh axes = [pp = 2]
func.func @s0(%x: tensor<2xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[]]>})
    -> (tensor<2xf32> {parc.name = "y", dist.sharding = #dist.sharding<@mesh, [[]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.stage = 0 : i64, dist.pipeline = {axis = "pp"}} {
  return %x : tensor<2xf32>
}
func.func @s5(%x: tensor<2xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[]]>})
    -> (tensor<2xf32> {parc.name = "y", dist.sharding = #dist.sharding<@mesh, [[]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.stage = 5 : i64, dist.pipeline = {axis = "pp"}} {
  return %x : tensor<2xf32>
}
