// RUN: parc-opt %s -split-input-file -verify-diagnostics

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op contracting dimensions differ: 'lhs' dimension 1 has size 3 but 'rhs' dimension 0 has size 4}}
  %0 = parc.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}
