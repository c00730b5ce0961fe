dist.mesh @mesh axes = [dp = 2]
func.func @forward(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[tp]]>})
    -> (tensor<4xf32> {parc.name = "y", dist.sharding = #dist.sharding<@mesh, [[]]>})
    attributes {dist.mesh = @mesh, dist.partitioned} {
  %y = parc.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
