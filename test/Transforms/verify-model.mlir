// RUN: parc-opt %s -split-input-file -parc-verify-model -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @model
func.func @model(%w: tensor<4x2xf32> {parc.role = "param", parc.name = "fc1.weight"},
                 %x: tensor<3x4xf32> {parc.role = "input", parc.name = "x"},
                 %y: tensor<3xi64> {parc.role = "label", parc.name = "labels", parc.init = #parc.init<uniform(0, 2)>})
    -> (tensor<f32> {parc.name = "loss"}) {
  %0 = parc.matmul %x, %w : tensor<3x4xf32>, tensor<4x2xf32> -> tensor<3x2xf32>
  %1 = parc.cross_entropy %0, %y : tensor<3x2xf32>, tensor<3xi64> -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// expected-error @+1 {{argument #0 of 'no_name' needs a non-empty string attribute 'parc.name'}}
func.func @no_name(%w: tensor<4xf32> {parc.role = "param"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'no_role' needs a string attribute 'parc.role' (param, input, label, optstate or carry)}}
func.func @no_role(%w: tensor<4xf32> {parc.name = "w"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'bad_role' has unknown role 'weight'; expected param, input, label, optstate or carry}}
func.func @bad_role(%w: tensor<4xf32> {parc.role = "weight", parc.name = "w"}) {
  return
}

// -----

func.func @repeated(%a: tensor<4xf32> {parc.role = "param", parc.name = "w"},
// expected-error @+1 {{argument #1 of 'repeated' repeats the name 'w' of argument #0}}
                    %b: tensor<4xf32> {parc.role = "param", parc.name = "w"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'f64_argument' must be a static-shape tensor of f32, bf16, f16, i32 or i64, got 'tensor<4xf64>'}}
func.func @f64_argument(%a: tensor<4xf64> {parc.role = "input", parc.name = "x"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'dynamic' must be a static-shape tensor of f32, bf16, f16, i32 or i64, got 'tensor<?xf32>'}}
func.func @dynamic(%a: tensor<?xf32> {parc.role = "input", parc.name = "x"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'bad_init' has a 'parc.init' that is not a #parc.init<...>}}
func.func @bad_init(%a: tensor<4xf32> {parc.role = "param", parc.name = "w", parc.init = 1.0}) {
  return
}

// -----

// expected-error @+1 {{result #1 of 'result_names' repeats the name 'loss'}}
func.func @result_names(%a: tensor<f32> {parc.role = "input", parc.name = "x"})
    -> (tensor<f32> {parc.name = "loss"}, tensor<f32> {parc.name = "loss"}) {
  return %a, %a : tensor<f32>, tensor<f32>
}

// -----

// expected-error @+2 {{argument #1 of 'init_from_unknown' starts from 'v' (parc.init_from), which is no argument's name}}
func.func @init_from_unknown(%a: tensor<4xbf16> {parc.role = "param", parc.name = "w"},
                             %b: tensor<4xf32> {parc.role = "optstate", parc.name = "w.master", parc.init_from = "v"}) {
  return
}

// -----

// expected-error @+3 {{argument #2 of 'init_from_chain' starts from 'w.master' (parc.init_from), which starts from another argument itself}}
func.func @init_from_chain(%a: tensor<4xbf16> {parc.role = "param", parc.name = "w"},
                           %b: tensor<4xf32> {parc.role = "optstate", parc.name = "w.master", parc.init_from = "w"},
                           %c: tensor<4xf32> {parc.role = "optstate", parc.name = "w.copy", parc.init_from = "w.master"}) {
  return
}

// -----

// expected-error @+1 {{argument #0 of 'init_from_type' has a 'parc.init_from' that is not an argument's name}}
func.func @init_from_type(%a: tensor<4xf32> {parc.role = "param", parc.name = "w", parc.init_from = 1}) {
  return
}
