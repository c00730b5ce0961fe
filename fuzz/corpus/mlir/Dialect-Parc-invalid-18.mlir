
func.func @unary_dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{'parc.exp' op operand #0 must be statically shaped tensor}}
  %0 = parc.exp %a : tensor<?xf32>
  return
}
