// RUN: parc-opt %s | FileCheck %s
// RUN: parc-opt %s | parc-opt | FileCheck %s

// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x: tensor<2x4x9x7xf32>, %w: tensor<6x2x3x2xf32>,
                        %g: tensor<2x6x4x4xf32>) -> tensor<2x6x4x4xf32> {
  // (9 + 1 + 2 - 2 * 2 - 1) / 2 + 1 = 4 rows, (7 + 0 + 1 - 1 * 1 - 1) / 2 + 1 = 4 columns.
  // CHECK: parc.conv2d %{{.*}}, %{{.*}} strides [2, 2] padding [1, 0, 2, 1] dilations [2, 1] groups 2 : tensor<2x4x9x7xf32>, tensor<6x2x3x2xf32>
  %y = parc.conv2d %x, %w strides [2, 2] padding [1, 0, 2, 1] dilations [2, 1] groups 2
      : tensor<2x4x9x7xf32>, tensor<6x2x3x2xf32>
  // CHECK: parc.conv2d_input_grad {{.*}} groups 2 : tensor<6x2x3x2xf32>, tensor<2x6x4x4xf32> -> tensor<2x4x9x7xf32>
  %dx = parc.conv2d_input_grad %w, %g strides [2, 2] padding [1, 0, 2, 1] dilations [2, 1] groups 2
      : tensor<6x2x3x2xf32>, tensor<2x6x4x4xf32> -> tensor<2x4x9x7xf32>
  // CHECK: parc.conv2d_weight_grad {{.*}} groups 2 : tensor<2x4x9x7xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x2xf32>
  %dw = parc.conv2d_weight_grad %x, %g strides [2, 2] padding [1, 0, 2, 1] dilations [2, 1] groups 2
      : tensor<2x4x9x7xf32>, tensor<2x6x4x4xf32> -> tensor<6x2x3x2xf32>
  // The inferred result type is the function's.
  return %y : tensor<2x6x4x4xf32>
}

// CHECK-LABEL: func.func @poolings
func.func @poolings(%x: tensor<2x3x7x6xf32>, %g: tensor<2x3x4x3xf32>) -> tensor<2x3x4x3xf32> {
  // (7 + 1 + 1 - 3) / 2 + 1 = 4 rows, (6 + 0 + 1 - 3) / 2 + 1 = 3 columns.
  // CHECK: parc.max_pool2d %{{.*}} kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] : tensor<2x3x7x6xf32>
  %m = parc.max_pool2d %x kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] : tensor<2x3x7x6xf32>
  // CHECK: parc.avg_pool2d %{{.*}} kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] count_include_pad : tensor<2x3x7x6xf32>
  %a = parc.avg_pool2d %x kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] count_include_pad : tensor<2x3x7x6xf32>
  // CHECK: parc.max_pool2d_grad %{{.*}}, %{{.*}} kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] : tensor<2x3x7x6xf32>, tensor<2x3x4x3xf32>
  %dm = parc.max_pool2d_grad %x, %g kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] : tensor<2x3x7x6xf32>, tensor<2x3x4x3xf32>
  // CHECK: parc.avg_pool2d_grad %{{.*}} kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] : tensor<2x3x4x3xf32> -> tensor<2x3x7x6xf32>
  %da = parc.avg_pool2d_grad %g kernel [3, 3] strides [2, 2] padding [1, 0, 1, 1] dilations [1, 1] : tensor<2x3x4x3xf32> -> tensor<2x3x7x6xf32>
  %sum = parc.add %m, %a : tensor<2x3x4x3xf32>, tensor<2x3x4x3xf32> -> tensor<2x3x4x3xf32>
  return %sum : tensor<2x3x4x3xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<4x3x2x2xf32>, %c: tensor<3xf32>) -> tensor<4x3x2x2xf32> {
  // One group is the default and is not printed.
  // CHECK: %{{.*}}, %{{.*}}, %{{.*}} = parc.batch_norm %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 : tensor<4x3x2x2xf32>, tensor<3xf32>
  %y, %mean, %var = parc.batch_norm %x, %c, %c eps = 1.0e-5 groups = 1 : tensor<4x3x2x2xf32>, tensor<3xf32>
  // CHECK: parc.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}} eps = 1.000000e-05 groups = 2 : tensor<4x3x2x2xf32>, tensor<3xf32>
  %dx, %dgamma, %dbeta = parc.batch_norm_grad %x, %c, %y eps = 1.0e-5 groups = 2 : tensor<4x3x2x2xf32>, tensor<3xf32>
  return %dx : tensor<4x3x2x2xf32>
}
