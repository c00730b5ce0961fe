// RUN: parc-opt %s -split-input-file --parc-propagate-sharding -verify-diagnostics

dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{argument #0 of @forward: dimension 0 of size 6 cannot be split over mesh axis 'tp' (4 shards do not divide it)}}
func.func @forward(%x: tensor<6x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>}) -> tensor<6x8xf32> {
  %0 = parc.relu %x : tensor<6x8xf32>
  return %0 : tensor<6x8xf32>
}

// -----

dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{argument #0 of @forward refers to unknown mesh @other}}
func.func @forward(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@other, [[tp], []]>}) -> tensor<8x8xf32> {
  %0 = parc.relu %x : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{argument #0 of @forward: unknown axis 'pp' of mesh @mesh}}
func.func @forward(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[pp], []]>}) -> tensor<8x8xf32> {
  %0 = parc.relu %x : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

dist.mesh @mesh axes = [dp = 2, tp = 2]
func.func @forward(%x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, [[], [tp]]>},
                   %w: tensor<16x4xf32> {dist.sharding = #dist.sharding<@mesh, [[dp], []]>}) -> tensor<8x4xf32> {
  // expected-error @+1 {{'parc.matmul' op has conflicting explicit shardings: operand #0 dimension 1 is split over [tp] but operand #1 dimension 0 is split over [dp]}}
  %0 = parc.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{argument #0 of @forward has rank 2 but its sharding lists 1 dimensions}}
func.func @forward(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp]]>}) -> tensor<8x8xf32> {
  %0 = parc.relu %x : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

dist.mesh @mesh axes = [tp = 4]
dist.mesh @other axes = [tp = 2]
// expected-error @+1 {{argument #1 of @forward uses mesh @other but other annotations use @mesh}}
func.func @forward(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], []]>},
                   %y: tensor<8x8xf32> {dist.sharding = #dist.sharding<@other, [[tp], []]>}) -> tensor<8x8xf32> {
  %0 = parc.add %x, %y : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
