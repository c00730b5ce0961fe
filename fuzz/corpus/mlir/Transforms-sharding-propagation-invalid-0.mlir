// RUN: parc-opt %s -split-input-file --parc-propagate-sharding -verify-diagnostics

dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{argument #0 of @forward: dimension 0 of size 6 cannot be split over mesh axis 'tp' (4 shards do not divide it)}}
func.func @forward(%x: tensor<6x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>}) -> tensor<6x8xf32> {
  %0 = parc.relu %x : tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}
