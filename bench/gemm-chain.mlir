// The GEMMs of one MLP training step (hidden 4096, batch 512, f32), forward
// and backward-shaped: y1 = x W1, y2 = y1 W2, dW2 = y1^T dy, dy1 = dy W2^T,
// dW1 = x^T dy1. bench/run.sh times it against the same GEMMs on OpenBLAS.
func.func @forward(
    %x: tensor<512x4096xf32> {parc.role = "input", parc.name = "x"},
    %dy: tensor<512x4096xf32> {parc.role = "input", parc.name = "dy"},
    %w1: tensor<4096x4096xf32> {parc.role = "param", parc.name = "w1"},
    %w2: tensor<4096x4096xf32> {parc.role = "param", parc.name = "w2"})
    -> (tensor<4096x4096xf32> {parc.name = "dw1"},
        tensor<4096x4096xf32> {parc.name = "dw2"},
        tensor<512x4096xf32> {parc.name = "y2"}) {
  %y1 = parc.matmul %x, %w1 : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %y2 = parc.matmul %y1, %w2 : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %dw2 = parc.matmul %y1, %dy transpose_lhs : tensor<512x4096xf32>, tensor<512x4096xf32> -> tensor<4096x4096xf32>
  %dy1 = parc.matmul %dy, %w2 transpose_rhs : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %dw1 = parc.matmul %x, %dy1 transpose_lhs : tensor<512x4096xf32>, tensor<512x4096xf32> -> tensor<4096x4096xf32>
  return %dw1, %dw2, %y2 : tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<512x4096xf32>
}
