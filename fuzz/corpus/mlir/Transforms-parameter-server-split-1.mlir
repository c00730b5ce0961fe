
// The servers' axis must be the mesh's first.
dist.mesh @mesh axes = [dp = 2, ps = 2]
// expected-error @+1 {{--parc-parameter-server splits a partitioned function marked dist.parameter_server = {axis = "ps"} on a mesh whose first axis is 'ps'}}
func.func @step(%w: tensor<4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4xf32>
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  return %w : tensor<4xf32>
}
