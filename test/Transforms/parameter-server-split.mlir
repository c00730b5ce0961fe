// RUN: parc-opt %s --split-input-file --verify-diagnostics --parc-parameter-server | FileCheck %s

// A hand-written colocated step on [ps = 2, dp = 2]: the gradient of `w`
// is reduce-scattered to the update and the new part all-gathered. The
// workers push the two halves and join the pulled ones; the servers sum
// the pushes, update and send the part back.
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @step(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[dp]]>},
                %w: tensor<4xf32> {parc.role = "param", parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>},
                %m: tensor<2xf32> {parc.role = "optstate", parc.name = "w.momentum", dist.sharding = #dist.sharding<@mesh, [[dp]]>})
    -> (tensor<4xf32> {parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>},
        tensor<2xf32> {parc.name = "w.momentum", dist.sharding = #dist.sharding<@mesh, [[dp]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  %g = parc.mul %x, %w {parc.phase = "backward"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %gs = dist.reduce_scatter %g on @mesh ["dp"] dim = 0 {parc.phase = "update"} : tensor<4xf32> -> tensor<2xf32>
  %ws = dist.all_slice %w on @mesh ["dp"] dim = 0 {parc.phase = "update"} : tensor<4xf32> -> tensor<2xf32>
  %new, %newm = parc.sgd_update %ws, %gs, %m {lr = 0.1 : f64, momentum = 0.9 : f64, parc.phase = "update"} : tensor<2xf32>
  %whole = dist.all_gather %new on @mesh ["dp"] dim = 0 : tensor<2xf32> -> tensor<4xf32>
  return %whole, %newm : tensor<4xf32>, tensor<2xf32>
}
// CHECK-LABEL: func.func @step(
// CHECK-SAME: -> (tensor<4xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}]]>, parc.name = "w"})
// CHECK-SAME: dist.stage = 0
// CHECK: %[[G:.*]] = parc.mul
// CHECK: %[[P0:.*]] = parc.slice %[[G]] offsets [0] sizes [2] strides [1]
// CHECK-NEXT: dist.send %[[P0]] to @mesh["ps" = 1, "dp" = 0] channel 0
// CHECK-NEXT: %[[P1:.*]] = parc.slice %[[G]] offsets [2] sizes [2] strides [1]
// CHECK-NEXT: dist.send %[[P1]] to @mesh["ps" = 1, "dp" = 1] channel 0
// CHECK-NEXT: %[[N0:.*]] = dist.recv from @mesh["ps" = 1, "dp" = 0] channel 1
// CHECK-NEXT: %[[N1:.*]] = dist.recv from @mesh["ps" = 1, "dp" = 1] channel 1
// CHECK-NEXT: %[[W:.*]] = parc.concat %[[N0]], %[[N1]] axis = 0
// CHECK-NEXT: return %[[W]] : tensor<4xf32>
// CHECK-LABEL: func.func @step_servers(
// CHECK-SAME: %[[WS:.*]]: tensor<2xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}dp]]>, parc.name = "w", parc.role = "param"}
// CHECK-SAME: %[[M:.*]]: tensor<2xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}dp]]>, parc.name = "w.momentum", parc.role = "optstate"}
// CHECK-SAME: dist.stage = 1
// CHECK-NEXT: %[[R0:.*]] = dist.recv from @mesh["ps" = 0, "dp" = 0] channel 0
// CHECK-NEXT: %[[R1:.*]] = dist.recv from @mesh["ps" = 0, "dp" = 1] channel 0
// CHECK-NEXT: %[[SUM:.*]] = parc.add %[[R0]], %[[R1]]
// CHECK-NEXT: %[[NEW:.*]], %[[NEWM:.*]] = parc.sgd_update %[[WS]], %[[SUM]], %[[M]]
// CHECK-NEXT: dist.send %[[NEW]] to @mesh["ps" = 0, "dp" = 0] channel 1
// CHECK-NEXT: dist.send %[[NEW]] to @mesh["ps" = 0, "dp" = 1] channel 1
// CHECK-NEXT: return %[[NEW]], %[[NEWM]]

// -----

// The servers' axis must be the mesh's first.
dist.mesh @mesh axes = [dp = 2, ps = 2]
// expected-error @+1 {{--parc-parameter-server splits a partitioned function marked dist.parameter_server = {axis = "ps"} on a mesh whose first axis is 'ps'}}
func.func @step(%w: tensor<4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4xf32>
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  return %w : tensor<4xf32>
}

// -----

// The mark must name the servers' axis: it picks each stage's ranks.
dist.mesh @mesh axes = [ps = 2, dp = 2]
// expected-error @+1 {{--parc-parameter-server splits a partitioned function marked dist.parameter_server = {axis = "ps"}}}
func.func @step(%w: tensor<4xf32> {parc.role = "param", parc.name = "w"}) -> tensor<4xf32>
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "dp"}} {
  return %w : tensor<4xf32>
}

// -----

// An updated part read by anything but its all_gather or the return.
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @step(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[dp]]>},
                %w: tensor<4xf32> {parc.role = "param", parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>},
                %m: tensor<2xf32> {parc.role = "optstate", parc.name = "w.momentum", dist.sharding = #dist.sharding<@mesh, [[dp]]>})
    -> (tensor<2xf32> {parc.name = "w.twice", dist.sharding = #dist.sharding<@mesh, [[dp]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  %g = parc.mul %x, %w {parc.phase = "backward"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %gs = dist.reduce_scatter %g on @mesh ["dp"] dim = 0 {parc.phase = "update"} : tensor<4xf32> -> tensor<2xf32>
  %ws = dist.all_slice %w on @mesh ["dp"] dim = 0 {parc.phase = "update"} : tensor<4xf32> -> tensor<2xf32>
  %new, %newm = parc.sgd_update %ws, %gs, %m {lr = 0.1 : f64, momentum = 0.9 : f64, parc.phase = "update"} : tensor<2xf32>
  // expected-error @+1 {{reads an updated parameter part}}
  %twice = parc.add %new, %new : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %twice : tensor<2xf32>
}

// -----

// The update needs a value of the forward pass besides the gradient sums.
dist.mesh @mesh axes = [ps = 2, dp = 2]
func.func @step(%x: tensor<4xf32> {parc.role = "input", parc.name = "x", dist.sharding = #dist.sharding<@mesh, [[dp]]>},
                %w: tensor<2xf32> {parc.role = "param", parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>},
                %m: tensor<2xf32> {parc.role = "optstate", parc.name = "w.momentum", dist.sharding = #dist.sharding<@mesh, [[]]>})
    -> (tensor<2xf32> {parc.name = "w", dist.sharding = #dist.sharding<@mesh, [[]]>})
    attributes {dist.mesh = @mesh, dist.partitioned, dist.parameter_server = {axis = "ps"}} {
  // expected-error @+1 {{of the forward or backward pass is needed by the optimizer update}}
  %g = parc.slice %x offsets [0] sizes [2] strides [1] {parc.phase = "backward"} : tensor<4xf32> -> tensor<2xf32>
  %new, %newm = parc.sgd_update %w, %g, %m {lr = 0.1 : f64, momentum = 0.9 : f64, parc.phase = "update"} : tensor<2xf32>
  return %new : tensor<2xf32>
}
