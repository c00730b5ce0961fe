// RUN: parc-opt %s -split-input-file --parc-partition -verify-diagnostics
// Layouts written by hand are checked before partitioning trusts them.

dist.mesh @mesh axes = [tp = 2]
func.func @wrong_rank(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {dist.mesh = @mesh} {
  // expected-error @+1 {{'parc.relu' op result #0 has rank 2 but its sharding lists 1 dimensions}}
  %0 = parc.relu %x {dist.shardings = [#dist.sharding<@mesh, [[tp]]>]} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @mesh axes = [tp = 2]
func.func @count(%x: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {dist.mesh = @mesh} {
  // expected-error @+1 {{'parc.relu' op has 2 entries in 'dist.shardings' for 1 results}}
  %0 = parc.relu %x {dist.shardings = [#dist.sharding<@mesh, [[], []]>, #dist.sharding<@mesh, [[], []]>]} : tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

dist.mesh @mesh axes = [tp = 2]
// expected-error @+1 {{argument #0: dimension 0 of size 3 cannot be split over mesh axis 'tp' (2 shards do not divide it)}}
func.func @argument(%x: tensor<3x4xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>}) -> tensor<3x4xf32> attributes {dist.mesh = @mesh} {
  %0 = parc.relu %x : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @no_mesh(%x: tensor<4xf32>) -> tensor<4xf32> attributes {dist.mesh = @missing} {
  %0 = parc.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// expected-error @-4 {{refers to unknown mesh @missing}}
