// Grouped-query attention (4 query heads, 2 key/value heads) with a causal
// padding mask in which batch row 1 hides its first two keys, so its first
// two queries see no key at all (their outputs are zeros). The mask is
// log(0/1), -inf where a key is hidden.
func.func @forward(%x: tensor<2x6x32xf32> {parc.role = "input", parc.name = "x"},
                   %wq: tensor<32x32xf32> {parc.role = "param", parc.name = "wq"},
                   %wk: tensor<32x16xf32> {parc.role = "param", parc.name = "wk"},
                   %wv: tensor<32x16xf32> {parc.role = "param", parc.name = "wv"},
                   %wo: tensor<32x32xf32> {parc.role = "param", parc.name = "wo"})
    -> (tensor<f32> {parc.name = "loss"}) {
  %q2 = parc.matmul %x, %wq : tensor<2x6x32xf32>, tensor<32x32xf32> -> tensor<2x6x32xf32>
  %k2 = parc.matmul %x, %wk : tensor<2x6x32xf32>, tensor<32x16xf32> -> tensor<2x6x16xf32>
  %v2 = parc.matmul %x, %wv : tensor<2x6x32xf32>, tensor<32x16xf32> -> tensor<2x6x16xf32>
  %q3 = parc.reshape %q2 : tensor<2x6x32xf32> -> tensor<2x6x4x8xf32>
  %k3 = parc.reshape %k2 : tensor<2x6x16xf32> -> tensor<2x6x2x8xf32>
  %v3 = parc.reshape %v2 : tensor<2x6x16xf32> -> tensor<2x6x2x8xf32>
  %q = parc.transpose %q3 [0, 2, 1, 3] : tensor<2x6x4x8xf32> -> tensor<2x4x6x8xf32>
  %k = parc.transpose %k3 [0, 2, 1, 3] : tensor<2x6x2x8xf32> -> tensor<2x2x6x8xf32>
  %v = parc.transpose %v3 [0, 2, 1, 3] : tensor<2x6x2x8xf32> -> tensor<2x2x6x8xf32>
  %keep = parc.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]], [[[0.0, 0.0, 1.0, 1.0, 1.0, 1.0]]]]> : tensor<2x1x1x6xf32>
  %mask = parc.log %keep : tensor<2x1x1x6xf32>
  %a = parc.attention %q, %k, %v mask %mask causal scale = 0.35355339059327373 : tensor<2x4x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x1x1x6xf32>
  %at = parc.transpose %a [0, 2, 1, 3] : tensor<2x4x6x8xf32> -> tensor<2x6x4x8xf32>
  %merged = parc.reshape %at : tensor<2x6x4x8xf32> -> tensor<2x6x32xf32>
  %y = parc.matmul %merged, %wo : tensor<2x6x32xf32>, tensor<32x32xf32> -> tensor<2x6x32xf32>
  %t = parc.tanh %y : tensor<2x6x32xf32>
  %loss = parc.reduce_mean %t [0, 1, 2] : tensor<2x6x32xf32> -> tensor<f32>
  return %loss : tensor<f32>
}
