
// A learned additive bias (T5's relative positions) would need the scores'
// gradient, which parc.attention_grad does not produce.
func.func @learned_mask(%q: tensor<1x2x4x8xf32> {parc.role = "param", parc.name = "q"},
                        %bias: tensor<1x2x4x4xf32> {parc.role = "param", parc.name = "bias"}) -> tensor<f32> {
  %m = parc.tanh %bias : tensor<1x2x4x4xf32>
  // expected-error @+1 {{'parc.attention' op has a mask computed from parameters; parc does not differentiate attention's mask}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.5 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
  %1 = parc.reduce_sum %0 [0, 1, 2, 3] : tensor<1x2x4x8xf32> -> tensor<f32>
  return %1 : tensor<f32>
}
