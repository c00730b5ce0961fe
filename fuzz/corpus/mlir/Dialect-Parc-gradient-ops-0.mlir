// RUN: parc-opt %s | FileCheck %s
// RUN: parc-opt %s | parc-opt | FileCheck %s

// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>, %gamma: tensor<8xf32>,
                     %ids: tensor<2x3xi64>, %rows: tensor<2x3x8xf32>,
                     %q: tensor<1x2x3x4xf32>, %labels: tensor<2xi64>, %s: tensor<f32>) {
  // CHECK: parc.broadcast_to %{{.*}} : tensor<8xf32> -> tensor<2x8xf32>
  %0 = parc.broadcast_to %gamma : tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: parc.slice_grad %{{.*}} offsets [0, 2] strides [1, 2] : tensor<2x3xf32> -> tensor<2x8xf32>
  %sl = parc.slice %x offsets [0, 2] sizes [2, 3] strides [1, 2] : tensor<2x8xf32> -> tensor<2x3xf32>
  %1 = parc.slice_grad %sl offsets [0, 2] strides [1, 2] : tensor<2x3xf32> -> tensor<2x8xf32>
  // CHECK: parc.activation_grad gelu_tanh %{{.*}}, %{{.*}} : tensor<2x8xf32>
  %2 = parc.activation_grad gelu_tanh %x, %g : tensor<2x8xf32>
  // CHECK: parc.softmax_grad %{{.*}}, %{{.*}} axis = 1 : tensor<2x8xf32>
  %3 = parc.softmax_grad %x, %g axis = 1 : tensor<2x8xf32>
  // CHECK: parc.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<2x8xf32>, tensor<8xf32>
  %4:3 = parc.layer_norm_grad %x, %gamma, %g eps = 1.0e-5 : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: parc.rms_norm_grad
  %5:2 = parc.rms_norm_grad %x, %gamma, %g eps = 1.0e-6 : tensor<2x8xf32>, tensor<8xf32>
  // CHECK: parc.embedding_grad %{{.*}}, %{{.*}} : tensor<2x3xi64>, tensor<2x3x8xf32> -> tensor<10x8xf32>
  %6 = parc.embedding_grad %ids, %rows : tensor<2x3xi64>, tensor<2x3x8xf32> -> tensor<10x8xf32>
  // CHECK: parc.attention_grad {{.*}} causal scale = 5.000000e-01 :
  %7:3 = parc.attention_grad %q, %q, %q, %q causal scale = 0.5 : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
  // CHECK: parc.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>
  %8 = parc.cross_entropy_grad %x, %labels, %s count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>
  // CHECK: parc.cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} normalizer %{{.*}} shard %{{.*}} count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>, tensor<2xf32>
  %norm = parc.reduce_max %x [1] : tensor<2x8xf32> -> tensor<2xf32>
  %block = parc.constant dense<1> : tensor<i64>
  %9 = parc.cross_entropy_grad %x, %labels, %s normalizer %norm shard %block count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>, tensor<2xf32>
  return
}
