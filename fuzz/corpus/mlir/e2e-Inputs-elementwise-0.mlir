// The elementwise ops ONNX models bring (sqrt, erf, pow, select, compare,
// cast),
// with numpy broadcasting of every operand shape the runtime sees.
func.func @forward(%x: tensor<4x6xf32> {parc.role = "input", parc.name = "x"},
                   %y: tensor<6xf32> {parc.role = "param", parc.name = "y"})
    -> (tensor<4x6xf32> {parc.name = "out"}) {
  %e = parc.exp %x : tensor<4x6xf32>
  %s = parc.sqrt %e : tensor<4x6xf32>
  %f = parc.erf %s : tensor<4x6xf32>
  %p = parc.pow %e, %y : tensor<4x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %c = parc.constant dense<[[1], [0], [0], [1]]> : tensor<4x1xi32>
  %t = parc.select %c, %p, %y : tensor<4x1xi32>, tensor<4x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %u = parc.add %t, %f : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  // Truncation toward zero of exp(x) * 3, and a round trip through f16.
  %three = parc.constant dense<3.0> : tensor<f32>
  %scaled = parc.mul %e, %three : tensor<4x6xf32>, tensor<f32> -> tensor<4x6xf32>
  %i = parc.cast %scaled : tensor<4x6xf32> -> tensor<4x6xi32>
  %fi = parc.cast %i : tensor<4x6xi32> -> tensor<4x6xf32>
  %h = parc.cast %s : tensor<4x6xf32> -> tensor<4x6xf16>
  %fh = parc.cast %h : tensor<4x6xf16> -> tensor<4x6xf32>
  %v = parc.add %u, %fi : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %w = parc.add %v, %fh : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  // Comparisons of floats (broadcast) and of integers, as 0/1 conditions.
  %above = parc.compare gt %e, %y : tensor<4x6xf32>, tensor<6xf32> -> tensor<4x6xi32>
  %two = parc.constant dense<2> : tensor<1xi32>
  %small = parc.compare le %i, %two : tensor<4x6xi32>, tensor<1xi32> -> tensor<4x6xi32>
  %both = parc.select %above, %small, %above : tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32> -> tensor<4x6xi32>
  %flag = parc.cast %both : tensor<4x6xi32> -> tensor<4x6xf32>
  %out = parc.add %w, %flag : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  return %out : tensor<4x6xf32>
}
