
// The mark must name the servers' axis: it picks each stage's ranks.
dist.mesh @mesh axes = [ps = 2, dp = 2]
// expected-error @+1 {{--parc-parameter-server splits a partitioned function marked dist.parameter_server = {axis = "ps"}}}
func.func @step(%w: tensor<4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4xf32>
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "dp"}} {
  return %w : tensor<4xf32>
}
