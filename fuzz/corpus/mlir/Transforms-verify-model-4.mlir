
func.func @repeated(%a: tensor<4xf32> {parc.role = "param", parc.name = "w"},
// expected-error @+1 {{argument #1 of 'repeated' repeats the name 'w' of argument #0}}
                    %b: tensor<4xf32> {parc.role = "param", parc.name = "w"}) {
  return
}
