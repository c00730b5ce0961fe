// Only W1 is annotated (column split over tp): propagation infers W2 row
// split, and the partitioned MLP needs exactly one all_reduce of the
// [batch, out] result and no all_gather (Megatron-LM's MLP).
// RUN: parc-opt %s --parc-propagate-sharding | FileCheck %s --check-prefix=PROP
// RUN: parc-opt %s --parc-propagate-sharding --parc-partition | FileCheck %s --check-prefix=PART

dist.mesh @mesh axes = [tp = 4]

// PROP-LABEL: func.func @forward
// PROP-SAME: %arg0: tensor<8x16xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}], []]>
// PROP-SAME: %arg1: tensor<16x32xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}], [tp]]>
// PROP-SAME: %arg2: tensor<32x16xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}tp], []]>
// PROP: parc.matmul {{.*}}dist.shardings = [#dist.sharding<@mesh, {{\[\[}}], [tp]]>]
// PROP: parc.relu {{.*}}dist.shardings = [#dist.sharding<@mesh, {{\[\[}}], [tp]]>]

// PART-LABEL: func.func @forward
// PART-SAME: tensor<16x8xf32>
// PART-SAME: tensor<8x16xf32>
// PART-NOT: dist.all_gather
// PART: parc.matmul %{{.*}}, %{{.*}} : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
// PART: parc.relu %{{.*}} : tensor<8x8xf32>
// PART: parc.matmul %{{.*}}, %{{.*}} : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
// PART: dist.all_reduce sum %{{.*}} on @mesh ["tp"] : tensor<8x16xf32>
// PART-NOT: dist.all_reduce
// PART-NOT: dist.all_gather
// PART: return
func.func @forward(%x: tensor<8x16xf32> {parc.role = "input", parc.name = "x"},
                   %w1: tensor<16x32xf32> {parc.role = "param", parc.name = "fc1.weight",
                                           dist.sharding = #dist.sharding<@mesh, [[], [tp]]>},
                   %w2: tensor<32x16xf32> {parc.role = "param", parc.name = "fc2.weight"})
    -> (tensor<8x16xf32> {parc.name = "y"}) {
  %0 = parc.matmul %x, %w1 : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = parc.relu %0 : tensor<8x32xf32>
  %2 = parc.matmul %1, %w2 : tensor<8x32xf32>, tensor<32x16xf32> -> tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
