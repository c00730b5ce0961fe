module {
  func.func @forward(%arg0: tensor<8x32xi64> {parc.init = #parc.init<uniform(0.000000e+00, 2.560000e+02)>, parc.name = "input_ids", parc.role = "input"}, %arg1: tensor<8x32xi64> {parc.init = #parc.init<uniform(0.000000e+00, 2.560000e+02)>, parc.name = "labels", parc.role = "label"}, %arg2: tensor<256x64xf32> {parc.name = "wte.weight", parc.role = "param"}, %arg3: tensor<32x64xf32> {parc.name = "wpe.weight", parc.role = "param"}, %arg4: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.0.ln_1.weight", parc.role = "param"}, %arg5: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.ln_1.bias", parc.role = "param"}, %arg6: tensor<64x3x4x16xf32> {parc.checkpoint_shape = array<i64: 64, 192>, parc.name = "h.0.attn.c_attn.weight", parc.role = "param"}, %arg7: tensor<3x4x16xf32> {parc.checkpoint_shape = array<i64: 192>, parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.attn.c_attn.bias", parc.role = "param"}, %arg8: tensor<64x64xf32> {parc.name = "h.0.attn.c_proj.weight", parc.role = "param"}, %arg9: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.attn.c_proj.bias", parc.role = "param"}, %arg10: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.0.ln_2.weight", parc.role = "param"}, %arg11: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.ln_2.bias", parc.role = "param"}, %arg12: tensor<64x256xf32> {parc.name = "h.0.mlp.c_fc.weight", parc.role = "param"}, %arg13: tensor<256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.mlp.c_fc.bias", parc.role = "param"}, %arg14: tensor<256x64xf32> {parc.name = "h.0.mlp.c_proj.weight", parc.role = "param"}, %arg15: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.mlp.c_proj.bias", parc.role = "param"}, %arg16: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.1.ln_1.weight", parc.role = "param"}, %arg17: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.ln_1.bias", parc.role = "param"}, %arg18: tensor<64x3x4x16xf32> {parc.checkpoint_shape = array<i64: 64, 192>, parc.name = "h.1.attn.c_attn.weight", parc.role = "param"}, %arg19: tensor<3x4x16xf32> {parc.checkpoint_shape = array<i64: 192>, parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.attn.c_attn.bias", parc.role = "param"}, %arg20: tensor<64x64xf32> {parc.name = "h.1.attn.c_proj.weight", parc.role = "param"}, %arg21: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.attn.c_proj.bias", parc.role = "param"}, %arg22: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.1.ln_2.weight", parc.role = "param"}, %arg23: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.ln_2.bias", parc.role = "param"}, %arg24: tensor<64x256xf32> {parc.name = "h.1.mlp.c_fc.weight", parc.role = "param"}, %arg25: tensor<256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.mlp.c_fc.bias", parc.role = "param"}, %arg26: tensor<256x64xf32> {parc.name = "h.1.mlp.c_proj.weight", parc.role = "param"}, %arg27: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.mlp.c_proj.bias", parc.role = "param"}, %arg28: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "ln_f.weight", parc.role = "param"}, %arg29: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "ln_f.bias", parc.role = "param"}) -> (tensor<f32> {parc.name = "loss"}) {
    %0 = parc.embedding %arg2, %arg0 : tensor<256x64xf32>, tensor<8x32xi64> -> tensor<8x32x64xf32>
    %1 = parc.add %0, %arg3 {parc.name = "embeddings"} : tensor<8x32x64xf32>, tensor<32x64xf32> -> tensor<8x32x64xf32>
    %2 = parc.layer_norm %1, %arg4, %arg5 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %3 = parc.matmul %2, %arg6 matrix_dims [1, 1, 3] : tensor<8x32x64xf32>, tensor<64x3x4x16xf32> -> tensor<8x32x3x4x16xf32>
    %4 = parc.add %3, %arg7 : tensor<8x32x3x4x16xf32>, tensor<3x4x16xf32> -> tensor<8x32x3x4x16xf32>
    %5 = parc.slice %4 offsets [0, 0, 0, 0, 0] sizes [8, 32, 1, 4, 16] strides [1, 1, 1, 1, 1] : tensor<8x32x3x4x16xf32> -> tensor<8x32x1x4x16xf32>
    %6 = parc.reshape %5 : tensor<8x32x1x4x16xf32> -> tensor<8x32x4x16xf32>
    %7 = parc.transpose %6 [0, 2, 1, 3] : tensor<8x32x4x16xf32> -> tensor<8x4x32x16xf32>
    %8 = parc.slice %4 offsets [0, 0, 1, 0, 0] sizes [8, 32, 1, 4, 16] strides [1, 1, 1, 1, 1] : tensor<8x32x3x4x16xf32> -> tensor<8x32x1x4x16xf32>
    %9 = parc.reshape %8 : tensor<8x32x1x4x16xf32> -> tensor<8x32x4x16xf32>
    %10 = parc.transpose %9 [0, 2, 1, 3] : tensor<8x32x4x16xf32> -> tensor<8x4x32x16xf32>
    %11 = parc.slice %4 offsets [0, 0, 2, 0, 0] sizes [8, 32, 1, 4, 16] strides [1, 1, 1, 1, 1] : tensor<8x32x3x4x16xf32> -> tensor<8x32x1x4x16xf32>
    %12 = parc.reshape %11 : tensor<8x32x1x4x16xf32> -> tensor<8x32x4x16xf32>
    %13 = parc.transpose %12 [0, 2, 1, 3] : tensor<8x32x4x16xf32> -> tensor<8x4x32x16xf32>
    %14 = parc.attention %7, %10, %13 causal scale = 2.500000e-01 : tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>
    %15 = parc.transpose %14 [0, 2, 1, 3] : tensor<8x4x32x16xf32> -> tensor<8x32x4x16xf32>
    %16 = parc.reshape %15 : tensor<8x32x4x16xf32> -> tensor<8x32x64xf32>
    %17 = parc.matmul %16, %arg8 : tensor<8x32x64xf32>, tensor<64x64xf32> -> tensor<8x32x64xf32>
    %18 = parc.add %17, %arg9 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %19 = parc.add %1, %18 {parc.name = "h.0.attn.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %20 = parc.layer_norm %19, %arg10, %arg11 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %21 = parc.matmul %20, %arg12 : tensor<8x32x64xf32>, tensor<64x256xf32> -> tensor<8x32x256xf32>
    %22 = parc.add %21, %arg13 : tensor<8x32x256xf32>, tensor<256xf32> -> tensor<8x32x256xf32>
    %23 = parc.gelu tanh %22 : tensor<8x32x256xf32>
    %24 = parc.matmul %23, %arg14 : tensor<8x32x256xf32>, tensor<256x64xf32> -> tensor<8x32x64xf32>
    %25 = parc.add %24, %arg15 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %26 = parc.add %19, %25 {parc.name = "h.0.mlp.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %27 = parc.layer_norm %26, %arg16, %arg17 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %28 = parc.matmul %27, %arg18 matrix_dims [1, 1, 3] : tensor<8x32x64xf32>, tensor<64x3x4x16xf32> -> tensor<8x32x3x4x16xf32>
    %29 = parc.add %28, %arg19 : tensor<8x32x3x4x16xf32>, tensor<3x4x16xf32> -> tensor<8x32x3x4x16xf32>
    %30 = parc.slice %29 offsets [0, 0, 0, 0, 0] sizes [8, 32, 1, 4, 16] strides [1, 1, 1, 1, 1] : tensor<8x32x3x4x16xf32> -> tensor<8x32x1x4x16xf32>
    %31 = parc.reshape %30 : tensor<8x32x1x4x16xf32> -> tensor<8x32x4x16xf32>
    %32 = parc.transpose %31 [0, 2, 1, 3] : tensor<8x32x4x16xf32> -> tensor<8x4x32x16xf32>
    %33 = parc.slice %29 offsets [0, 0, 1, 0, 0] sizes [8, 32, 1, 4, 16] strides [1, 1, 1, 1, 1] : tensor<8x32x3x4x16xf32> -> tensor<8x32x1x4x16xf32>
    %34 = parc.reshape %33 : tensor<8x32x1x4x16xf32> -> tensor<8x32x4x16xf32>
    %35 = parc.transpose %34 [0, 2, 1, 3] : tensor<8x32x4x16xf32> -> tensor<8x4x32x16xf32>
    %36 = parc.slice %29 offsets [0, 0, 2, 0, 0] sizes [8, 32, 1, 4, 16] strides [1, 1, 1, 1, 1] : tensor<8x32x3x4x16xf32> -> tensor<8x32x1x4x16xf32>
    %37 = parc.reshape %36 : tensor<8x32x1x4x16xf32> -> tensor<8x32x4x16xf32>
    %38 = parc.transpose %37 [0, 2, 1, 3] : tensor<8x32x4x16xf32> -> tensor<8x4x32x16xf32>
    %39 = parc.attention %32, %35, %38 causal scale = 2.500000e-01 : tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>
    %40 = parc.transpose %39 [0, 2, 1, 3] : tensor<8x4x32x16xf32> -> tensor<8x32x4x16xf32>
    %41 = parc.reshape %40 : tensor<8x32x4x16xf32> -> tensor<8x32x64xf32>
    %42 = parc.matmul %41, %arg20 : tensor<8x32x64xf32>, tensor<64x64xf32> -> tensor<8x32x64xf32>
    %43 = parc.add %42, %arg21 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %44 = parc.add %26, %43 {parc.name = "h.1.attn.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %45 = parc.layer_norm %44, %arg22, %arg23 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %46 = parc.matmul %45, %arg24 : tensor<8x32x64xf32>, tensor<64x256xf32> -> tensor<8x32x256xf32>
    %47 = parc.add %46, %arg25 : tensor<8x32x256xf32>, tensor<256xf32> -> tensor<8x32x256xf32>
    %48 = parc.gelu tanh %47 : tensor<8x32x256xf32>
    %49 = parc.matmul %48, %arg26 : tensor<8x32x256xf32>, tensor<256x64xf32> -> tensor<8x32x64xf32>
    %50 = parc.add %49, %arg27 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %51 = parc.add %44, %50 {parc.name = "h.1.mlp.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %52 = parc.layer_norm %51, %arg28, %arg29 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %53 = parc.matmul %52, %arg2 transpose_rhs : tensor<8x32x64xf32>, tensor<256x64xf32> -> tensor<8x32x256xf32>
    %54 = parc.cross_entropy %53, %arg1 : tensor<8x32x256xf32>, tensor<8x32xi64> -> tensor<f32>
    return %54 : tensor<f32>
  }
}

//--plan
{
  "mesh": {
    "dp": 2
  },
  "data_parallel": {
    "sync": "local-sgd",
    "sync_every": 2
  }
}
