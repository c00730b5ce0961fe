// Annotating only W2 (row split) reaches W1 backwards through relu.
// RUN: parc-opt %s --parc-propagate-sharding | FileCheck %s
dist.mesh @mesh axes = [tp = 2]
// CHECK: %arg1: tensor<16x32xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}], [tp]]>
func.func @forward(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
                   %w1: tensor<16x32xf32> {parc.role = "param", parc.name = "w1"},
                   %w2: tensor<32x16xf32> {parc.role = "param", parc.name = "w2",
                                           dist.sharding = #dist.sharding<@mesh, [[tp], []]>})
    -> tensor<8x16xf32> {
  %0 = parc.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = parc.relu %0 : tensor<8x32xf32>
  %2 = parc.matmul %1, %w2 : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
