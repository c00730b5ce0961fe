
dist.mesh @mesh axes = [pp = 2, dp = 2]
func.func @send_peer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op peer coordinate 2 is outside axis 'pp' of size 2}}
  dist.send %x to @mesh["pp" = 2] channel 0 : tensor<4xf32>
  return
}
