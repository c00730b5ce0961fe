module {
  func.func @forward(%arg0: tensor<8x32xi64> {parc.init = #parc.init<uniform(0.000000e+00, 2.560000e+02)>, parc.name = "input_ids", parc.role = "input"}, %arg1: tensor<8x32xi64> {parc.init = #parc.init<uniform(0.000000e+00, 2.560000e+02)>, parc.name = "labels", parc.role = "label"}, %arg2: tensor<256x64xf32> {parc.name = "wte.weight", parc.role = "param"}, %arg3: tensor<32x64xf32> {parc.name = "wpe.weight", parc.role = "param"}, %arg4: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.0.ln_1.weight", parc.role = "param"}, %arg5: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.ln_1.bias", parc.role = "param"}, %arg6: tensor<64x3x4x16xf32> {parc.checkpoint_shape = array<i64: 64, 192>, parc.name = "h.0.attn.c_attn.weight", parc.role = "param"}, %arg7: tensor<3x4x1x16xf32> {parc.checkpoint_shape = array<i64: 192>, parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.attn.c_attn.bias", parc.role = "param"}, %arg8: tensor<64x64xf32> {parc.name = "h.0.attn.c_proj.weight", parc.role = "param"}, %arg9: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.attn.c_proj.bias", parc.role = "param"}, %arg10: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.0.ln_2.weight", parc.role = "param"}, %arg11: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.ln_2.bias", parc.role = "param"}, %arg12: tensor<64x256xf32> {parc.name = "h.0.mlp.c_fc.weight", parc.role = "param"}, %arg13: tensor<256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.mlp.c_fc.bias", parc.role = "param"}, %arg14: tensor<256x64xf32> {parc.name = "h.0.mlp.c_proj.weight", parc.role = "param"}, %arg15: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.0.mlp.c_proj.bias", parc.role = "param"}, %arg16: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.1.ln_1.weight", parc.role = "param"}, %arg17: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.ln_1.bias", parc.role = "param"}, %arg18: tensor<64x3x4x16xf32> {parc.checkpoint_shape = array<i64: 64, 192>, parc.name = "h.1.attn.c_attn.weight", parc.role = "param"}, %arg19: tensor<3x4x1x16xf32> {parc.checkpoint_shape = array<i64: 192>, parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.attn.c_attn.bias", parc.role = "param"}, %arg20: tensor<64x64xf32> {parc.name = "h.1.attn.c_proj.weight", parc.role = "param"}, %arg21: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.attn.c_proj.bias", parc.role = "param"}, %arg22: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "h.1.ln_2.weight", parc.role = "param"}, %arg23: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.ln_2.bias", parc.role = "param"}, %arg24: tensor<64x256xf32> {parc.name = "h.1.mlp.c_fc.weight", parc.role = "param"}, %arg25: tensor<256xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.mlp.c_fc.bias", parc.role = "param"}, %arg26: tensor<256x64xf32> {parc.name = "h.1.mlp.c_proj.weight", parc.role = "param"}, %arg27: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "h.1.mlp.c_proj.bias", parc.role = "param"}, %arg28: tensor<64xf32> {parc.init = #parc.init<constant(1.000000e+00)>, parc.name = "ln_f.weight", parc.role = "param"}, %arg29: tensor<64xf32> {parc.init = #parc.init<constant(0.000000e+00)>, parc.name = "ln_f.bias", parc.role = "param"}) -> (tensor<f32> {parc.name = "loss"}) {
    %0 = parc.embedding %arg2, %arg0 : tensor<256x64xf32>, tensor<8x32xi64> -> tensor<8x32x64xf32>
    %1 = parc.add %0, %arg3 {parc.name = "embeddings"} : tensor<8x32x64xf32>, tensor<32x64xf32> -> tensor<8x32x64xf32>
    %2 = parc.layer_norm %1, %arg4, %arg5 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %3 = parc.reshape %2 : tensor<8x32x64xf32> -> tensor<8x1x1x32x64xf32>
    %4 = parc.transpose %arg6 [1, 2, 0, 3] : tensor<64x3x4x16xf32> -> tensor<3x4x64x16xf32>
    %5 = parc.matmul %3, %4 : tensor<8x1x1x32x64xf32>, tensor<3x4x64x16xf32> -> tensor<8x3x4x32x16xf32>
    %6 = parc.add %5, %arg7 : tensor<8x3x4x32x16xf32>, tensor<3x4x1x16xf32> -> tensor<8x3x4x32x16xf32>
    %7 = parc.slice %6 offsets [0, 0, 0, 0, 0] sizes [8, 1, 4, 32, 16] strides [1, 1, 1, 1, 1] : tensor<8x3x4x32x16xf32> -> tensor<8x1x4x32x16xf32>
    %8 = parc.reshape %7 : tensor<8x1x4x32x16xf32> -> tensor<8x4x32x16xf32>
    %9 = parc.slice %6 offsets [0, 1, 0, 0, 0] sizes [8, 1, 4, 32, 16] strides [1, 1, 1, 1, 1] : tensor<8x3x4x32x16xf32> -> tensor<8x1x4x32x16xf32>
    %10 = parc.reshape %9 : tensor<8x1x4x32x16xf32> -> tensor<8x4x32x16xf32>
    %11 = parc.slice %6 offsets [0, 2, 0, 0, 0] sizes [8, 1, 4, 32, 16] strides [1, 1, 1, 1, 1] : tensor<8x3x4x32x16xf32> -> tensor<8x1x4x32x16xf32>
    %12 = parc.reshape %11 : tensor<8x1x4x32x16xf32> -> tensor<8x4x32x16xf32>
    %13 = parc.attention %8, %10, %12 causal scale = 2.500000e-01 : tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>
    %14 = parc.transpose %13 [0, 2, 1, 3] : tensor<8x4x32x16xf32> -> tensor<8x32x4x16xf32>
    %15 = parc.reshape %14 : tensor<8x32x4x16xf32> -> tensor<8x32x64xf32>
    %16 = parc.matmul %15, %arg8 : tensor<8x32x64xf32>, tensor<64x64xf32> -> tensor<8x32x64xf32>
    %17 = parc.add %16, %arg9 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %18 = parc.add %1, %17 {parc.name = "h.0.attn.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %19 = parc.layer_norm %18, %arg10, %arg11 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %20 = parc.matmul %19, %arg12 : tensor<8x32x64xf32>, tensor<64x256xf32> -> tensor<8x32x256xf32>
    %21 = parc.add %20, %arg13 : tensor<8x32x256xf32>, tensor<256xf32> -> tensor<8x32x256xf32>
    %22 = parc.gelu tanh %21 : tensor<8x32x256xf32>
    %23 = parc.matmul %22, %arg14 : tensor<8x32x256xf32>, tensor<256x64xf32> -> tensor<8x32x64xf32>
    %24 = parc.add %23, %arg15 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %25 = parc.add %18, %24 {parc.name = "h.0.mlp.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %26 = parc.layer_norm %25, %arg16, %arg17 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %27 = parc.reshape %26 : tensor<8x32x64xf32> -> tensor<8x1x1x32x64xf32>
    %28 = parc.transpose %arg18 [1, 2, 0, 3] : tensor<64x3x4x16xf32> -> tensor<3x4x64x16xf32>
    %29 = parc.matmul %27, %28 : tensor<8x1x1x32x64xf32>, tensor<3x4x64x16xf32> -> tensor<8x3x4x32x16xf32>
    %30 = parc.add %29, %arg19 : tensor<8x3x4x32x16xf32>, tensor<3x4x1x16xf32> -> tensor<8x3x4x32x16xf32>
    %31 = parc.slice %30 offsets [0, 0, 0, 0, 0] sizes [8, 1, 4, 32, 16] strides [1, 1, 1, 1, 1] : tensor<8x3x4x32x16xf32> -> tensor<8x1x4x32x16xf32>
    %32 = parc.reshape %31 : tensor<8x1x4x32x16xf32> -> tensor<8x4x32x16xf32>
    %33 = parc.slice %30 offsets [0, 1, 0, 0, 0] sizes [8, 1, 4, 32, 16] strides [1, 1, 1, 1, 1] : tensor<8x3x4x32x16xf32> -> tensor<8x1x4x32x16xf32>
    %34 = parc.reshape %33 : tensor<8x1x4x32x16xf32> -> tensor<8x4x32x16xf32>
    %35 = parc.slice %30 offsets [0, 2, 0, 0, 0] sizes [8, 1, 4, 32, 16] strides [1, 1, 1, 1, 1] : tensor<8x3x4x32x16xf32> -> tensor<8x1x4x32x16xf32>
    %36 = parc.reshape %35 : tensor<8x1x4x32x16xf32> -> tensor<8x4x32x16xf32>
    %37 = parc.attention %32, %34, %36 causal scale = 2.500000e-01 : tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>, tensor<8x4x32x16xf32>
    %38 = parc.transpose %37 [0, 2, 1, 3] : tensor<8x4x32x16xf32> -> tensor<8x32x4x16xf32>
    %39 = parc.reshape %38 : tensor<8x32x4x16xf32> -> tensor<8x32x64xf32>
    %40 = parc.matmul %39, %arg20 : tensor<8x32x64xf32>, tensor<64x64xf32> -> tensor<8x32x64xf32>
    %41 = parc.add %40, %arg21 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %42 = parc.add %25, %41 {parc.name = "h.1.attn.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %43 = parc.layer_norm %42, %arg22, %arg23 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %44 = parc.matmul %43, %arg24 : tensor<8x32x64xf32>, tensor<64x256xf32> -> tensor<8x32x256xf32>
    %45 = parc.add %44, %arg25 : tensor<8x32x256xf32>, tensor<256xf32> -> tensor<8x32x256xf32>
    %46 = parc.gelu tanh %45 : tensor<8x32x256xf32>
    %47 = parc.matmul %46, %arg26 : tensor<8x32x256xf32>, tensor<256x64xf32> -> tensor<8x32x64xf32>
    %48 = parc.add %47, %arg27 : tensor<8x32x64xf32>, tensor<64xf32> -> tensor<8x32x64xf32>
    %49 = parc.add %42, %48 {parc.name = "h.1.mlp.residual"} : tensor<8x32x64xf32>, tensor<8x32x64xf32> -> tensor<8x32x64xf32>
    %50 = parc.layer_norm %49, %arg28, %arg29 eps = 1.000000e-05 : tensor<8x32x64xf32>, tensor<64xf32>, tensor<64xf32>
    %51 = parc.matmul %50, %arg2 transpose_rhs : tensor<8x32x64xf32>, tensor<256x64xf32> -> tensor<8x32x256xf32>
    %52 = parc.cross_entropy %51, %arg1 : tensor<8x32x256xf32>, tensor<8x32xi64> -> tensor<f32>
    return %52 : tensor<f32>
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
