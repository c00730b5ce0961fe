
func.func @sigmoid_scalar(%a: f32) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = parc.sigmoid %a : f32
  return
}
