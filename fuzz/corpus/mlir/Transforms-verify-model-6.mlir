
// expected-error @+1 {{argument #0 of 'dynamic' must be a static-shape tensor of f32, bf16, f16, i32 or i64, got 'tensor<?xf32>'}}
func.func @dynamic(%a: tensor<?xf32> {parc.role = "input", parc.name = "x"}) {
  return
}
