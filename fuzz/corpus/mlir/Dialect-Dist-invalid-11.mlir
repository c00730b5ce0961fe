
dist.mesh @mesh axes = [pp = 2, dp = 2]
func.func @recv_axis() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op unknown axis 'stage' of mesh @mesh}}
  %0 = dist.recv from @mesh["stage" = 0] channel 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
