func.func @forward(%p: f32 {parc.role = "param", parc.name = "p"}) -> f32 {
  return %p : f32
}
