
// expected-error @+1 {{argument #0 of 'f64_argument' must be a static-shape tensor of f32, bf16, f16, i32 or i64, got 'tensor<4xf64>'}}
func.func @f64_argument(%a: tensor<4xf64> {parc.role = "input", parc.name = "x"}) {
  return
}
