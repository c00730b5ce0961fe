module {
  func.func @forward(%arg0: tensor<8x64xf32> {parc.name = "x", parc.role = "input"}, %arg1: tensor<8xi64> {parc.init = #parc.init<uniform(0.000000e+00, 1.600000e+01)>, parc.name = "labels", parc.role = "label"}, %arg2: tensor<64x256xf32> {parc.name = "fc1.weight", parc.role = "param"}, %arg3: tensor<256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "fc1.bias", parc.role = "param"}, %arg4: tensor<256x16xf32> {parc.name = "fc2.weight", parc.role = "param"}, %arg5: tensor<16xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "fc2.bias", parc.role = "param"}, %arg6: tensor<f32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "optimizer.step", parc.role = "optstate"}, %arg7: tensor<64x256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "fc1.weight.momentum", parc.role = "optstate"}, %arg8: tensor<256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "fc1.bias.momentum", parc.role = "optstate"}, %arg9: tensor<256x16xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "fc2.weight.momentum", parc.role = "optstate"}, %arg10: tensor<16xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "fc2.bias.momentum", parc.role = "optstate"}) -> (tensor<f32> {parc.name = "loss"}, tensor<64x256xf32> {parc.name = "fc1.weight"}, tensor<256xf32> {parc.name = "fc1.bias"}, tensor<256x16xf32> {parc.name = "fc2.weight"}, tensor<16xf32> {parc.name = "fc2.bias"}, tensor<64x256xf32> {parc.name = "fc1.weight.momentum"}, tensor<256xf32> {parc.name = "fc1.bias.momentum"}, tensor<256x16xf32> {parc.name = "fc2.weight.momentum"}, tensor<16xf32> {parc.name = "fc2.bias.momentum"}, tensor<f32> {parc.name = "optimizer.step"}) {
    %0 = parc.matmul %arg0, %arg2 {parc.phase = "forward"} : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
    %1 = parc.add %0, %arg3 {parc.phase = "forward"} : tensor<8x256xf32>, tensor<256xf32> -> tensor<8x256xf32>
    %2 = parc.relu %1 {parc.phase = "forward"} : tensor<8x256xf32>
    %3 = parc.matmul %2, %arg4 {parc.phase = "forward"} : tensor<8x256xf32>, tensor<256x16xf32> -> tensor<8x16xf32>
    %4 = parc.add %3, %arg5 {parc.phase = "forward"} : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
    %5 = parc.cross_entropy %4, %arg1 {parc.phase = "forward"} : tensor<8x16xf32>, tensor<8xi64> -> tensor<f32>
    %6 = parc.constant {parc.phase = "backward"} dense<1.000000e+00> : tensor<f32>
    %7 = parc.cross_entropy_grad %4, %arg1, %6 count = 8 {parc.phase = "backward"} : tensor<8x16xf32>, tensor<8xi64>, tensor<f32>
    %8 = parc.reduce_sum %7 [0] keepdims {parc.phase = "backward"} : tensor<8x16xf32> -> tensor<1x16xf32>
    %9 = parc.reshape %8 {parc.phase = "backward"} : tensor<1x16xf32> -> tensor<16xf32>
    %10 = parc.matmul %7, %arg4 transpose_rhs {parc.phase = "backward"} : tensor<8x16xf32>, tensor<256x16xf32> -> tensor<8x256xf32>
    %11 = parc.matmul %2, %7 transpose_lhs {parc.phase = "backward"} : tensor<8x256xf32>, tensor<8x16xf32> -> tensor<256x16xf32>
    %12 = parc.activation_grad relu %1, %10 {parc.phase = "backward"} : tensor<8x256xf32>
    %13 = parc.reduce_sum %12 [0] keepdims {parc.phase = "backward"} : tensor<8x256xf32> -> tensor<1x256xf32>
    %14 = parc.reshape %13 {parc.phase = "backward"} : tensor<1x256xf32> -> tensor<256xf32>
    %15 = parc.matmul %arg0, %12 transpose_lhs {parc.phase = "backward"} : tensor<8x64xf32>, tensor<8x256xf32> -> tensor<64x256xf32>
    %new_param, %new_momentum_buffer = parc.sgd_update %arg2, %15, %arg7 {lr = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64, parc.phase = "update"} : tensor<64x256xf32>
    %new_param_0, %new_momentum_buffer_1 = parc.sgd_update %arg3, %14, %arg8 {lr = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64, parc.phase = "update"} : tensor<256xf32>
    %new_param_2, %new_momentum_buffer_3 = parc.sgd_update %arg4, %11, %arg9 {lr = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64, parc.phase = "update"} : tensor<256x16xf32>
    %new_param_4, %new_momentum_buffer_5 = parc.sgd_update %arg5, %9, %arg10 {lr = 1.000000e-03 : f64, momentum = 9.000000e-01 : f64, parc.phase = "update"} : tensor<16xf32>
    %16 = parc.constant {parc.phase = "update"} dense<1.000000e+00> : tensor<f32>
    %17 = parc.add %arg6, %16 {parc.phase = "update"} : tensor<f32>, tensor<f32> -> tensor<f32>
    return %5, %new_param, %new_param_0, %new_param_2, %new_param_4, %new_momentum_buffer, %new_momentum_buffer_1, %new_momentum_buffer_3, %new_momentum_buffer_5, %17 : tensor<f32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x16xf32>, tensor<16xf32>, tensor<64x256xf32>, tensor<256xf32>, tensor<256x16xf32>, tensor<16xf32>, tensor<f32>
  }
}


//--plan
{
  "mesh": {
    "dp": 2
  },
  "shardings": {
    "x": [["dp"], []],
    "labels": [["dp"]]
  },
  "data_parallel": {
    "sync": "parameter-server",
    "placement": "dedicated"
  }
}
