// RUN: parc-opt %s -split-input-file --parc-partition -verify-diagnostics
// Layouts written by hand are checked before partitioning trusts them.

dist.mesh @mesh axes = [tp = 2]
func.func @wrong_rank(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {dist.mesh = @mesh} {
  // expected-error @+1 {{'parc.relu' op result #0 has rank 2 but its sharding lists 1 dimensions}}
  %0 = parc.relu %x {dist.shardings = [#dist.sharding<@mesh, [[tp]]>]} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
