
func.func @no_rule(%w: tensor<4x3xf32> {parc.role = "param", parc.name = "w"}) -> tensor<f32> {
  // expected-error @+1 {{'parc.reduce_max' op has no gradient rule yet}}
  %0 = parc.reduce_max %w [1] : tensor<4x3xf32> -> tensor<4xf32>
  %1 = parc.reduce_sum %0 [0] : tensor<4xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
