
// expected-error @+2 {{argument #1 of 'init_from_unknown' starts from 'v' (parc.init_from), which is no argument's name}}
func.func @init_from_unknown(%a: tensor<4xbf16> {parc.role = "param", parc.name = "w"},
                             %b: tensor<4xf32> {parc.role = "optstate", parc.name = "w.master", parc.init_from = "v"}) {
  return
}
