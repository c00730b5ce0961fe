
func.func @no_mesh(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dist.mesh = @missing} {
  %0 = parc.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// expected-error @-4 {{refers to unknown mesh @missing}}
