dist.mesh @mesh axes = [dp = 2]
func.func @forward(%x: tensor<4xf32> {dist.sharding = #dist.sharding<@mesh, [[dp]]>, parc.name = "x", parc.role = "input"}) -> (tensor<4xf32> {parc.name = "y"}) {
  %y = parc.neg %x : tensor<4xf32>
  %p = dist.constraint %y : tensor<4xf32> to <@mesh, [[]], partial [dp]>
  %z = parc.neg %p : tensor<4xf32>
  return %z : tensor<4xf32>
}
