
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @send_axis_twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op names axis 'dp' twice}}
  dist.send %x to @mesh["dp" = 1, "dp" = 0] channel 0 : tensor<4xf32>
  return
}
