
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @recv_coordinates(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.recv' op needs one peer coordinate per axis and at least one axis, got 2 axes and 1 coordinates}}
  %0 = "dist.recv"() <{mesh = @mesh, axes = ["ps", "dp"], peer = array<i64: 1>, channel = 0 : i64}> : () -> tensor<4xf32>
  return
}
