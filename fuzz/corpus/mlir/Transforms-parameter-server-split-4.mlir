
// The update needs a value of the forward pass besides the gradient sums.
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @step(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[dp]]>},
                %w: tensor<2xf32> {parc.role = "param", parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>},
                %m: tensor<2xf32> {parc.role = "optstate", parc.name = "w.momentum", dist.sharding = #dist.sharding<@mesh, [[]]>})
    -> (tensor<2xf32> {parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  // expected-error @+1 {{of the forward or backward pass is needed by the optimizer update}}
  %g = parc.slice %x offsets [0] sizes [2] strides [1] {parc.phase = "backward"} : tensor<4xf32> -> tensor<2xf32>
  %new, %newm = parc.sgd_update %w, %g, %m {lr = 0.1 : f64, momentum = 0.9 : f64, parc.phase = "update"} : tensor<2xf32>
  return %new : tensor<2xf32>
}
