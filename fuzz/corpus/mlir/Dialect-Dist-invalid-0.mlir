// RUN: parc-opt %s -split-input-file -verify-diagnostics

dist.mesh @mesh axes = [tp = 4]
func.func @gather(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result dimension 1 has size 16, expected 32 for a group of 4 ranks}}
  %0 = dist.all_gather %x on @mesh ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return
}
