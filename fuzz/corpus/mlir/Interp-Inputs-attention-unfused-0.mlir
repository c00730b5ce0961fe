// attention-fused.mlir's attention spelled out: key/value heads repeated
// for their query heads, scores, both masks added, softmax, values.
func.func @forward(%q: tensor<2x4x6x8xf32> {parc.role = "input", parc.name = "q"},
                   %k: tensor<2x2x6x8xf32> {parc.role = "input", parc.name = "k"},
                   %v: tensor<2x2x6x8xf32> {parc.role = "input", parc.name = "v"})
    -> (tensor<2x4x6x8xf32> {parc.name = "out"}) {
  %keep = parc.constant dense<[[[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]], [[[0.0, 0.0, 1.0, 1.0, 1.0, 1.0]]]]> : tensor<2x1x1x6xf32>
  %mask = parc.log %keep : tensor<2x1x1x6xf32>
  %k5 = parc.reshape %k : tensor<2x2x6x8xf32> -> tensor<2x2x1x6x8xf32>
  %kb = parc.broadcast_to %k5 : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
  %kr = parc.reshape %kb : tensor<2x2x2x6x8xf32> -> tensor<2x4x6x8xf32>
  %v5 = parc.reshape %v : tensor<2x2x6x8xf32> -> tensor<2x2x1x6x8xf32>
  %vb = parc.broadcast_to %v5 : tensor<2x2x1x6x8xf32> -> tensor<2x2x2x6x8xf32>
  %vr = parc.reshape %vb : tensor<2x2x2x6x8xf32> -> tensor<2x4x6x8xf32>
  %kt = parc.transpose %kr [0, 1, 3, 2] : tensor<2x4x6x8xf32> -> tensor<2x4x8x6xf32>
  %s = parc.matmul %q, %kt : tensor<2x4x6x8xf32>, tensor<2x4x8x6xf32> -> tensor<2x4x6x6xf32>
  %c = parc.constant dense<0.35355339059327373> : tensor<f32>
  %scaled = parc.mul %s, %c : tensor<2x4x6x6xf32>, tensor<f32> -> tensor<2x4x6x6xf32>
  %tril = parc.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<6x6xf32>
  %causal = parc.log %tril : tensor<6x6xf32>
  %m1 = parc.add %scaled, %causal : tensor<2x4x6x6xf32>, tensor<6x6xf32> -> tensor<2x4x6x6xf32>
  %m2 = parc.add %m1, %mask : tensor<2x4x6x6xf32>, tensor<2x1x1x6xf32> -> tensor<2x4x6x6xf32>
  %p = parc.softmax %m2 axis = 3 : tensor<2x4x6x6xf32>
  %out = parc.matmul %p, %vr : tensor<2x4x6x6xf32>, tensor<2x4x6x8xf32> -> tensor<2x4x6x8xf32>
  return %out : tensor<2x4x6x8xf32>
}
