
// expected-error @+3 {{argument #2 of 'init_from_chain' starts from 'w.master' (parc.init_from), which starts from another argument itself}}
func.func @init_from_chain(%a: tensor<4xbf16> {parc.role = "param", parc.name = "w"},
                           %b: tensor<4xf32> {parc.role = "optstate", parc.name = "w.master", parc.init_from = "w"},
                           %c: tensor<4xf32> {parc.role = "optstate", parc.name = "w.copy", parc.init_from = "w.master"}) {
  return
}
