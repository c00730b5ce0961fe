// RUN: %python %S/Inputs/make_safetensors.py %t.x.safetensors x=F32:4:1
// RUN: parc-run --reference --simulate-ranks %s --func ordered --inputs %t.x.safetensors | FileCheck %s --check-prefix=ORDERED
// RUN: %exit1 parc-run --reference --simulate-ranks %s --func deadlock 2>&1 | FileCheck %s --check-prefix=DEADLOCK

// Each rank sends to itself (the pipeline axis has one stage) before it
// receives (buffered sends): two messages on channel 0 arrive in the order
// sent, the one on channel 1 apart. y = (2x - x) + 2x = 3 for x = 1; the
// wrong order would give (x - 2x) + 2x = 1.
dist.mesh @self axes = [pp = 1, dp = 2]
func.func @ordered(%x: tensor<2xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@self, [[dp]]>})
    -> (tensor<2xf32> {parc.name = "y", dist.sharding = #dist.sharding<@self, [[dp]]>})
    attributes {dist.mesh = @self, dist.partitioned} {
  %d = parc.add %x, %x : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  dist.send %d to @self["pp" = 0] channel 0 : tensor<2xf32>
  dist.send %x to @self["pp" = 0] channel 0 : tensor<2xf32>
  dist.send %d to @self["pp" = 0] channel 1 : tensor<2xf32>
  %first = dist.recv from @self["pp" = 0] channel 0 : tensor<2xf32>
  %second = dist.recv from @self["pp" = 0] channel 0 : tensor<2xf32>
  %other = dist.recv from @self["pp" = 0] channel 1 : tensor<2xf32>
  %s = parc.sub %first, %second : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %y = parc.add %s, %other : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
// ORDERED: y: tensor<4xf32> mean 3 std 0 min 3 max 3

dist.mesh @mesh axes = [pp = 2]
// Every rank receives before anyone sends.
func.func @deadlock(%x: tensor<2xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[pp]]>})
    -> (tensor<2xf32> {parc.name = "y", dist.sharding = #dist.sharding<@mesh, [[pp]]>})
    attributes {dist.mesh = @mesh, dist.partitioned} {
  %y = dist.recv from @mesh["pp" = 1] channel 5 : tensor<2xf32>
  dist.send %x to @mesh["pp" = 0] channel 5 : tensor<2xf32>
  return %y : tensor<2xf32>
}
// DEADLOCK: error: 'dist.recv' op waits forever: the simulated ranks deadlock
// DEADLOCK: note: rank 0 waits in dist.recv
// DEADLOCK: note: rank 1 waits in dist.recv
