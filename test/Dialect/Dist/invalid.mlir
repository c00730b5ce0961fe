// RUN: parc-opt %s -split-input-file -verify-diagnostics

dist.mesh @mesh axes = [tp = 4]
func.func @gather(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result dimension 1 has size 16, expected 32 for a group of 4 ranks}}
  %0 = dist.all_gather %x on @mesh ["tp"] dim = 1 : tensor<4x8xf32> -> tensor<4x16xf32>
  return
}

// -----

dist.mesh @mesh axes = [tp = 4]
func.func @scatter(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op dimension 1 of size 6 cannot be split into 4 chunks}}
  %0 = dist.reduce_scatter %x on @mesh ["tp"] dim = 1 : tensor<4x6xf32> -> tensor<4x1xf32>
  return
}

// -----

dist.mesh @mesh axes = [tp = 4]
func.func @unknown_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op refers to unknown mesh @other}}
  %0 = dist.all_reduce sum %x on @other ["tp"] : tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [tp = 4]
func.func @unknown_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op unknown axis 'dp' of mesh @mesh}}
  %0 = dist.all_reduce sum %x on @mesh ["dp"] : tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [tp = 4]
func.func @twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op lists axis 'tp' twice}}
  %0 = dist.all_reduce sum %x on @mesh ["tp", "tp"] : tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [tp = 4]
func.func @slice_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_slice' op dimension 1 is out of range for rank 1}}
  %0 = dist.all_slice %x on @mesh ["tp"] dim = 1 : tensor<4xf32> -> tensor<1xf32>
  return
}

// -----

// expected-error @+1 {{'dist.mesh' op names axis 'tp' twice}}
dist.mesh @mesh axes = [tp = 4, tp = 2]

// -----

// expected-error @+1 {{'dist.mesh' op axis 'tp' has size 0; sizes must be >= 1}}
dist.mesh @mesh axes = [tp = 0]

// -----

dist.mesh @mesh axes = [tp = 4]
// expected-error @+1 {{mesh axis 'tp' is used twice in one sharding (again in dimension 1)}}
func.func @axis_twice(%x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@mesh, [[tp], [tp]]>}) {
  return
}

// -----

dist.mesh @mesh axes = [tp = 4]
func.func @constraint(%x: tensor<6xf32>) {
  // expected-error @+1 {{'dist.constraint' op operand: dimension 0 of size 6 cannot be split over mesh axis 'tp' (4 shards do not divide it)}}
  %0 = dist.constraint %x : tensor<6xf32> to #dist.sharding<@mesh, [[tp]]>
  return
}

// -----

dist.mesh @mesh axes = [pp = 2, dp = 2]
func.func @send_peer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op peer coordinate 2 is outside axis 'pp' of size 2}}
  dist.send %x to @mesh["pp" = 2] channel 0 : tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [pp = 2, dp = 2]
func.func @recv_axis() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op unknown axis 'stage' of mesh @mesh}}
  %0 = dist.recv from @mesh["stage" = 0] channel 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @send_axis_twice(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op names axis 'dp' twice}}
  dist.send %x to @mesh["dp" = 1, "dp" = 0] channel 0 : tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @send_no_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.send' op needs one peer coordinate per axis and at least one axis, got 0 axes and 0 coordinates}}
  dist.send %x to @mesh[] channel 0 : tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @recv_coordinates(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.recv' op needs one peer coordinate per axis and at least one axis, got 2 axes and 1 coordinates}}
  %0 = "dist.recv"() <{mesh = @mesh, axes = ["ps", "dp"], peer = array<i64: 1>, channel = 0 : i64}> : () -> tensor<4xf32>
  return
}

// -----

dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @recv_second_peer() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op peer coordinate 2 is outside axis 'dp' of size 2}}
  %0 = dist.recv from @mesh["ps" = 0, "dp" = 2] channel 0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @mesh axes = [pp = 2]
func.func @recv_channel() -> tensor<4xf32> {
  // expected-error @+1 {{'dist.recv' op channel -1 is not in [0, 2^31)}}
  %0 = dist.recv from @mesh["pp" = 0] channel -1 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'dist.mesh' op has more than 2^31 ranks (2 before axis 'b' of size 4294967296)}}
dist.mesh @mesh axes = [a = 2, b = 4294967296, c = 4294967296]
