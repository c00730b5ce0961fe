
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @recv_second_peer() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op peer coordinate 2 is outside axis 'dp' of size 2}}
  %0 = dist.recv from @mesh["ps" = 0, "dp" = 2] channel 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
