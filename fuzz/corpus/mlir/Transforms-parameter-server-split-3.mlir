
// An updated part read by anything but its all_gather or the return.
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @step(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[dp]]>},
                %w: tensor<4xf32> {parc.role = "param", parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>},
                %m: tensor<2xf32> {parc.role = "optstate", parc.name = "w.momentum", dist.sharding = #dist.sharding<@mesh, [[dp]]>})
    -> (tensor<2xf32> {parc.name = "w.twice", dist.sharding = #dist.sharding<@mesh, [[dp]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  %g = parc.mul %x, %w {parc.phase = "backward"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %gs = dist.reduce_scatter %g on @mesh ["dp"] dim = 0 {parc.phase = "update"} : tensor<4xf32> -> tensor<2xf32>
  %ws = dist.all_slice %w on @mesh ["dp"] dim = 0 {parc.phase = "update"} : tensor<4xf32> -> tensor<2xf32>
  %new, %newm = parc.sgd_update %ws, %gs, %m {lr = 0.1 : f64, momentum = 0.9 : f64, parc.phase = "update"} : tensor<2xf32>
  // expected-error @+1 {{reads an updated parameter part}}
  %twice = parc.add %new, %new : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %twice : tensor<2xf32>
}
