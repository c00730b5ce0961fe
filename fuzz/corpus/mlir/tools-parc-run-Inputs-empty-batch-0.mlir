func.func @forward(%logits: tensor<0x3xf32> {parc.role = "input", parc.name = "logits"},
                   %labels: tensor<0xi64> {parc.role = "label", parc.name = "labels", parc.init = #parc.init<uniform(0.0, 3.0)>}) -> (tensor<f32> {parc.name = "loss"}) {
  %loss = parc.cross_entropy %logits, %labels : tensor<0x3xf32>, tensor<0xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
