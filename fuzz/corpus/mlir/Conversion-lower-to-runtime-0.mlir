// RUN: parc-opt %s --parc-propagate-sharding --parc-partition --parc-plan-memory --parc-lower-to-runtime | FileCheck %s
// A partitioned MLP becomes one libparcrt call per op with constant
// descriptors, plus the JSON the runtime's main reads.

dist.mesh @mesh axes = [tp = 2]

// CHECK-NOT: func.func
// CHECK-NOT: dist.mesh
// CHECK-DAG: llvm.func @parcrt_matmul(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @parcrt_relu(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @parcrt_all_reduce(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK: llvm.mlir.global external constant @parc_program_json("{\22version\22:1,\22function\22:\22forward\22,\22mesh\22:{\22axes\22:[\22tp\22],\22sizes\22:[2]},\22arena_bytes\22:
// CHECK-SAME: \22name\22:\22w1\22,\22dtype\22:\22F32\22,\22global_shape\22:[16,32],\22local_shape\22:[16,16],\22sharding\22:{{\[\[}}],[\22tp\22]]
// CHECK-LABEL: llvm.func @parc_program_step(%arg0: !llvm.ptr)
// CHECK: %[[T0:.*]] = llvm.mlir.addressof @__parc_program_tensors{{[0-9]+}} : !llvm.ptr
// CHECK: %[[I0:.*]] = llvm.mlir.addressof @__parc_program_ints{{[0-9]+}} : !llvm.ptr
// CHECK: %[[F0:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call @parcrt_matmul(%arg0, %[[T0]], %[[I0]], %[[F0]])
// CHECK: llvm.call @parcrt_relu(
// CHECK: llvm.call @parcrt_matmul(
// CHECK: llvm.call @parcrt_all_reduce(
// CHECK: llvm.return
// Descriptors: offset, dtype, rank, 8 sizes per tensor.
// CHECK: llvm.mlir.global internal constant @__parc_program_tensors{{[0-9]+}}(dense<[{{[0-9]+}}, 0, 2, 8, 16, 0, 0, 0, 0, 0, 0,
// The all_reduce's group: 1 axis at position 0, then sum (0).
// CHECK: llvm.mlir.global internal constant @__parc_program_ints{{[0-9]+}}(dense<[1, 0, 0]> : tensor<3xi64>)
func.func @forward(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
                   %w1: tensor<16x32xf32> {parc.role = "param", parc.name = "w1",
                                           dist.sharding = #dist.sharding<@mesh, [[], [tp]]>},
                   %w2: tensor<32x16xf32> {parc.role = "param", parc.name = "w2"})
    -> (tensor<8x16xf32> {parc.name = "y"}) {
  %0 = parc.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = parc.relu %0 : tensor<8x32xf32>
  %2 = parc.matmul %1, %w2 : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
