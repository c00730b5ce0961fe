
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @send_no_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op needs one peer coordinate per axis and at least one axis, got 0 axes and 0 coordinates}}
  dist.send %x to @mesh[] channel 0 : tensor<4xf32>
  return
}
