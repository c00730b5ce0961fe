
dist.mesh @mesh axes = [pp = 2]
func.func @recv_channel() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op channel -1 is not in [0, 2^31)}}
  %0 = dist.recv from @mesh["pp" = 0] channel -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
