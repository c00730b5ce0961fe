// parc.attention with grouped-query heads, a padding mask and causal
// masking; attention-unfused.mlir computes the same from matmuls and a
// softmax (checked by ../attention.test).
func.func @forward(%q: tensor<2x4x6x8xf32> {parc.role = "input", parc.name = "q"},
                   %k: tensor<2x2x6x8xf32> {parc.role = "input", parc.name = "k"},
                   %v: tensor<2x2x6x8xf32> {parc.role = "input", parc.name = "v"})
    -> (tensor<2x4x6x8xf32> {parc.name = "out"}) {
  %keep = parc.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]], [[[0.0, 0.0, 1.0, 1.0, 1.0, 1.0]]]]> : tensor<2x1x1x6xf32>
  %mask = parc.log %keep : tensor<2x1x1x6xf32>
  %out = parc.attention %q, %k, %v mask %mask causal scale = 0.35355339059327373 : tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x1x1x6xf32>
  return %out : tensor<2x4x6x8xf32>
}
