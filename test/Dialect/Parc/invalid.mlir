// RUN: parc-opt %s -split-input-file -verify-diagnostics

func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op contracting dimensions differ: 'lhs' dimension 1 has size 3 but 'rhs' dimension 0 has size 4}}
  %0 = parc.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op operand 'lhs' must have rank >= 2, got rank 1}}
  %0 = parc.matmul %a, %b : tensor<3xf32>, tensor<3x5xf32> -> tensor<5xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op cannot broadcast 'lhs' dimension 0 (size 2) against 'rhs' dimension 0 (size 3)}}
  %0 = parc.matmul %a, %b : tensor<2x4x3xf32>, tensor<3x3x5xf32> -> tensor<2x4x5xf32>
  return
}

// -----

// contract_batch sums over batch dimensions both operands have.
func.func @matmul_contract_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{'parc.matmul' op contract_batch needs operands with the same batch dimensions (at least one), got tensor<2x4x3xf32> and tensor<3x5xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = parc.matmul %a, %b contract_batch : tensor<2x4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @matmul_matrix_dims(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op matrix_dims must be three counts >= 1 (rows, contracting, columns), got [1, 0, 1]}}
  %0 = parc.matmul %a, %b matrix_dims [1, 0, 1] : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_matrix_dims_count(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op matrix_dims must be three counts >= 1 (rows, contracting, columns), got [1, 1]}}
  %0 = parc.matmul %a, %b matrix_dims [1, 1] : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf32>
  return
}

// -----

// Three column dimensions need a rhs of rank 4 at least.
func.func @matmul_matrix_dims_rank(%a: tensor<2x3xf32>, %b: tensor<3x5x2xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op operand 'rhs' must have rank >= 4, got rank 3}}
  %0 = parc.matmul %a, %b matrix_dims [1, 1, 3] : tensor<2x3xf32>, tensor<3x5x2xf32> -> tensor<2x5x2xf32>
  return
}

// -----

// Two contracting dimensions: the second differs.
func.func @matmul_matrix_dims_contracting(%a: tensor<2x3x4xf32>, %b: tensor<5x3x6xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op contracting dimensions differ: 'lhs' dimension 2 has size 4 but 'rhs' dimension 2 has size 6}}
  %0 = parc.matmul %a, %b transpose_rhs matrix_dims [1, 2, 1] : tensor<2x3x4xf32>, tensor<5x3x6xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x5xf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op element type of 'lhs' (f32) differs from 'rhs' (f16)}}
  %0 = parc.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf16> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.matmul' op inferred type(s) 'tensor<2x5xf32>' are incompatible with return type(s) of operation 'tensor<2x6xf32>'}}
  %0 = parc.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @matmul_integers(%a: tensor<2x3xi32>, %b: tensor<3x5xi32>) {
  // expected-error @+1 {{'parc.matmul' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = parc.matmul %a, %b : tensor<2x3xi32>, tensor<3x5xi32> -> tensor<2x5xi32>
  return
}

// -----

func.func @matmul_dynamic(%a: tensor<?x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'parc.matmul' op operand #0 must be statically shaped tensor}}
  %0 = parc.matmul %a, %b : tensor<?x3xf32>, tensor<3x5xf32> -> tensor<?x5xf32>
  return
}

// -----

func.func @add_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.add' op cannot broadcast 'lhs' dimension 1 (size 3) against 'rhs' dimension 0 (size 4)}}
  %0 = parc.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @sub_element_types(%a: tensor<3xf32>, %b: tensor<3xbf16>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.sub' op element type of 'lhs' (f32) differs from 'rhs' (bf16)}}
  %0 = parc.sub %a, %b : tensor<3xf32>, tensor<3xbf16> -> tensor<3xf32>
  return
}

// -----

func.func @mul_result(%a: tensor<3xf32>, %b: tensor<1xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.mul' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<1xf32>'}}
  %0 = parc.mul %a, %b : tensor<3xf32>, tensor<1xf32> -> tensor<1xf32>
  return
}

// -----

func.func @div_integers(%a: tensor<3xi64>, %b: tensor<3xi64>) {
  // expected-error @+1 {{'parc.div' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = parc.div %a, %b : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return
}

// -----

func.func @unary_integer(%a: tensor<3xi32>) {
  // expected-error @+1 {{'parc.relu' op operand #0 must be statically shaped tensor of 32-bit float or bfloat16 type or 16-bit float values}}
  %0 = parc.relu %a : tensor<3xi32>
  return
}

// -----

func.func @unary_integer(%a: tensor<3xi32>) {
  // expected-error @+1 {{'parc.neg' op operand #0 must be statically shaped tensor}}
  %0 = parc.neg %a : tensor<3xi32>
  return
}

// -----

func.func @unary_dynamic(%a: tensor<?xf32>) {
  // expected-error @+1 {{'parc.exp' op operand #0 must be statically shaped tensor}}
  %0 = parc.exp %a : tensor<?xf32>
  return
}

// -----

func.func @tanh_unranked(%a: tensor<*xf32>) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = parc.tanh %a : tensor<*xf32>
  return
}

// -----

func.func @sigmoid_scalar(%a: f32) {
  // expected-error @+1 {{invalid kind of type specified: expected builtin.tensor, but found 'f32'}}
  %0 = parc.sigmoid %a : f32
  return
}

// -----

func.func @silu_integer(%a: tensor<2xi64>) {
  // expected-error @+1 {{'parc.silu' op operand #0 must be statically shaped tensor}}
  %0 = parc.silu %a : tensor<2xi64>
  return
}

// -----

func.func @gelu_form(%a: tensor<3xf32>) {
  // expected-error @+2 {{expected ::mlir::parc::GeluApproximation to be one of: erf, tanh}}
  // expected-error @+1 {{failed to parse Parc_GeluApproximationAttr parameter 'value'}}
  %0 = parc.gelu sigmoid %a : tensor<3xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.softmax' op axis 2 is out of range for rank 2}}
  %0 = parc.softmax %a axis = 2 : tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'parc.layer_norm' op operand 'gamma' must have shape [8] (the last dimension of 'input'), got rank 1 with dimension 0 of size 4}}
  %0 = parc.layer_norm %x, %g, %b eps = 1.0e-5 : tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>
  return
}

// -----

func.func @layer_norm_beta_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf16>) {
  // expected-error @+1 {{'parc.layer_norm' op element type of 'input' (f32) differs from 'beta' (f16)}}
  %0 = parc.layer_norm %x, %g, %b eps = 1.0e-5 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf16>
  return
}

// -----

func.func @rms_norm_gamma(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{'parc.rms_norm' op operand 'gamma' must have shape [8] (the last dimension of 'input'), got rank 2 with dimension 0 of size 2}}
  %0 = parc.rms_norm %x, %g eps = 1.0e-6 : tensor<2x8xf32>, tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'parc.rms_norm' op operand 'input' must have rank >= 1}}
  %0 = parc.rms_norm %x, %g eps = 1.0e-6 : tensor<f32>, tensor<1xf32>
  return
}

// -----

func.func @embedding_table(%t: tensor<10xf32>, %ids: tensor<4xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.embedding' op operand 'table' must be [vocab, dim] (rank 2), got rank 1}}
  %0 = parc.embedding %t, %ids : tensor<10xf32>, tensor<4xi64> -> tensor<4xf32>
  return
}

// -----

func.func @embedding_float_ids(%t: tensor<10x4xf32>, %ids: tensor<4xf32>) {
  // expected-error @+1 {{'parc.embedding' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = parc.embedding %t, %ids : tensor<10x4xf32>, tensor<4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.reshape' op cannot reshape 'input' of 6 elements into 8 elements}}
  %0 = parc.reshape %x : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reshape_type(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.reshape' op result element type differs from 'input'}}
  %0 = parc.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return
}

// -----

func.func @transpose_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.transpose' op permutation entry 0 is out of range or repeated}}
  %0 = parc.transpose %x [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.transpose' op permutation has 3 entries but 'input' has rank 2}}
  %0 = parc.transpose %x [0, 1, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = parc.reduce_sum %x [2] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_twice(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.reduce_mean' op axis 1 is listed twice}}
  %0 = parc.reduce_mean %x [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.concat' op inputs[1] dimension 0 has size 3, inputs[0] has 2}}
  %0 = parc.concat %a, %b axis = 1 : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.concat' op axis 2 is out of range for rank 2}}
  %0 = parc.concat %a, %a axis = 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.concat' op inputs[1] has rank 3, inputs[0] has rank 2}}
  %0 = parc.concat %a, %b axis = 0 : tensor<2x3xf32>, tensor<2x3x1xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.slice' op dimension 1: slice reaches index 5 but 'input' has size 4}}
  %0 = parc.slice %x offsets [0, 1] sizes [4, 3] strides [1, 2] : tensor<4x4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @slice_rank(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.slice' op sizes has 1 entries but 'input' has rank 2}}
  %0 = parc.slice %x offsets [0, 0] sizes [4] strides [1, 1] : tensor<4x4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_stride(%x: tensor<4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.slice' op dimension 0: offset 0, size 2 and stride 0 must be >= 0, >= 0 and >= 1}}
  %0 = parc.slice %x offsets [0] sizes [2] strides [0] : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'parc.constant' op result #0 must be statically shaped tensor}}
  %0 = parc.constant dense<1.0> : tensor<2xf64>
  return
}

// -----

func.func @attention_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x4x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op operand 'query' must be [batch, heads, seq, head_dim], got rank 3}}
  %0 = parc.attention %q, %k, %k causal scale = 0.25 : tensor<2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<2x3x8x16xf32>, %k: tensor<2x2x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op the key's 2 heads must divide the query's 3 (grouped-query attention)}}
  %0 = parc.attention %q, %k, %k causal scale = 0.25 : tensor<2x3x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>
  return
}

// -----

func.func @attention_value_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x4x8x16xf32>) {
  // expected-error @+1 {{'parc.attention' op 'value' dimension 1 has size 4 but 'key' has size 2}}
  %0 = parc.attention %q, %k, %v scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<2x4x8x16xf32>, %m: tensor<8x8xf32>) {
  // expected-error @+1 {{'parc.attention' op 'mask' must be [batch, heads, seq, kv_seq], got rank 2}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<8x8xf32>
  return
}

// -----

func.func @attention_mask_heads(%q: tensor<2x4x8x16xf32>, %m: tensor<2x2x8x8xf32>) {
  // expected-error @+1 {{'parc.attention' op 'mask' dimension 1 has size 2; the scores' is 4 (or 1 to broadcast)}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x2x8x8xf32>
  return
}

// -----

func.func @attention_mask_keys(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x1xf32>) {
  // expected-error @+1 {{'parc.attention' op 'mask' dimension 3 has size 1; the scores' is 8}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x1xf32>
  return
}

// -----

func.func @attention_mask_type(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf16>) {
  // expected-error @+1 {{'parc.attention' op}}
  %0 = parc.attention %q, %q, %q mask %m scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf16>
  return
}

// -----

func.func @attention_value_seq(%q: tensor<2x4x8x16xf32>, %v: tensor<2x4x6x16xf32>) {
  // expected-error @+1 {{'parc.attention' op 'value' dimension 2 has size 6 but 'key' has size 8}}
  %0 = parc.attention %q, %q, %v causal scale = 0.25 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>
  return
}

// -----

func.func @cross_entropy_labels(%x: tensor<2x8x10xf32>, %y: tensor<2x4xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.cross_entropy' op 'labels' dimension 1 has size 4 but 'logits' has size 8}}
  %0 = parc.cross_entropy %x, %y : tensor<2x8x10xf32>, tensor<2x4xi64> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_rank(%x: tensor<2x10xf32>, %y: tensor<2x10xi64>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'parc.cross_entropy' op operand 'labels' must have rank 1 (that of 'logits' without its class dimension), got rank 2}}
  %0 = parc.cross_entropy %x, %y : tensor<2x10xf32>, tensor<2x10xi64> -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_float_labels(%x: tensor<2x10xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{'parc.cross_entropy' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = parc.cross_entropy %x, %y : tensor<2x10xf32>, tensor<2xf32> -> tensor<f32>
  return
}

// -----

// expected-error @+1 {{uniform init needs low < high, got [5.000000e+00, 5.000000e+00)}}
func.func @init_range(%x: tensor<2xi64> {parc.init = #parc.init<uniform(5, 5)>}) {
  return
}

// -----

// expected-error @+1 {{unknown init distribution 'gaussian'; expected normal, uniform or constant}}
func.func @init_kind(%x: tensor<2xf32> {parc.init = #parc.init<gaussian(0.0, 1.0)>}) {
  return
}

// -----

func.func @broadcast_to(%x: tensor<3xf32>) {
  // expected-error @+1 {{'parc.broadcast_to' op 'input' dimension 0 of size 3 cannot broadcast to size 4}}
  %0 = parc.broadcast_to %x : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @slice_grad(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'parc.slice_grad' op dimension 1: 3 elements from offset 2 with stride 2 do not fit in size 6}}
  %0 = parc.slice_grad %x offsets [0, 2] strides [1, 2] : tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @embedding_grad(%ids: tensor<2xi64>, %g: tensor<3x8xf32>) {
  // expected-error @+1 {{'parc.embedding_grad' op expects 'gradient' of shape ids x [dim] and a [vocab, dim] result}}
  %0 = parc.embedding_grad %ids, %g : tensor<2xi64>, tensor<3x8xf32> -> tensor<10x8xf32>
  return
}

// -----

func.func @cross_entropy_grad(%x: tensor<2x8xf32>, %y: tensor<2xi64>, %s: tensor<f32>) {
  // expected-error @+1 {{'parc.cross_entropy_grad' op 'count' must be positive}}
  %0 = parc.cross_entropy_grad %x, %y, %s count = 0 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>
  return
}

// -----

func.func @cross_entropy_grad_normalizer_without_shard(%x: tensor<2x8xf32>, %y: tensor<2xi64>, %s: tensor<f32>, %n: tensor<2xf32>) {
  // expected-error @+1 {{'parc.cross_entropy_grad' op takes 'normalizer' and 'shard' together}}
  %0 = parc.cross_entropy_grad %x, %y, %s normalizer %n count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>, tensor<2xf32>
  return
}

// -----

func.func @cross_entropy_grad_normalizer_shape(%x: tensor<2x8xf32>, %y: tensor<2xi64>, %s: tensor<f32>, %n: tensor<2x1xf32>, %b: tensor<i64>) {
  // expected-error @+1 {{'parc.cross_entropy_grad' op 'normalizer' must have the labels' shape and the logits' element type}}
  %0 = parc.cross_entropy_grad %x, %y, %s normalizer %n shard %b count = 2 : tensor<2x8xf32>, tensor<2xi64>, tensor<f32>, tensor<2x1xf32>
  return
}

// -----

func.func @compare_mixed_types(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{'parc.compare' op}}
  %0 = parc.compare eq %a, %b : tensor<2xf32>, tensor<2xi32> -> tensor<2xi32>
  return
}

// -----

func.func @compare_float_result(%a: tensor<2xf32>) {
  // expected-error @+1 {{'parc.compare' op result #0 must be statically shaped tensor of 32-bit signless integer values}}
  %0 = parc.compare ge %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  return
}

// -----

func.func @compare_unknown_predicate(%a: tensor<2xf32>) {
  // expected-error @+2 {{expected ::mlir::parc::ComparisonPredicate to be one of: eq, ne, lt, le, gt, ge}}
  // expected-error @+1 {{failed to parse Parc_ComparisonPredicateAttr}}
  %0 = parc.compare approx %a, %a : tensor<2xf32>, tensor<2xf32> -> tensor<2xi32>
  return
}

// -----

func.func @conv2d_kernel_exceeds_input(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'parc.conv2d' op the dilated kernel's height (5) exceeds the padded input's (4)}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [2, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return
}

// -----

func.func @conv2d_groups(%x: tensor<1x6x4x4xf32>, %w: tensor<4x3x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op 4 groups must divide the 6 input channels and the 4 filters}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 4 : tensor<1x6x4x4xf32>, tensor<4x3x1x1xf32>
  return
}

// -----

func.func @conv2d_group_channels(%x: tensor<1x6x4x4xf32>, %w: tensor<4x6x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op 'weight' dimension 1 has size 6, but the 6 input channels in 2 groups give 3 per group}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 2 : tensor<1x6x4x4xf32>, tensor<4x6x1x1xf32>
  return
}

// -----

func.func @conv2d_stride(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op strides and dilations must be positive, got 0}}
  %0 = parc.conv2d %x, %w strides [0, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}

// -----

func.func @conv2d_padding_overflow(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op the width geometry overflows int64}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [0, 9223372036854775807, 0, 1] dilations [1, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}

// -----

func.func @conv2d_padding_count(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x1x1xf32>) {
  // expected-error @+1 {{'parc.conv2d' op strides and dilations need 2 values and padding 4}}
  %0 = parc.conv2d %x, %w strides [1, 1] padding [1, 1] dilations [1, 1] groups 1 : tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>
  return
}

// -----

func.func @conv2d_input_grad_shape(%w: tensor<2x1x3x3xf32>, %g: tensor<1x2x3x3xf32>) {
  // expected-error @+1 {{'parc.conv2d_input_grad' op 'gradient' has type 'tensor<1x2x3x3xf32>', but the convolution's result has shape [1, 2, 2, 2]}}
  %0 = parc.conv2d_input_grad %w, %g strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<2x1x3x3xf32>, tensor<1x2x3x3xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @conv2d_weight_grad_rank(%x: tensor<1x1x4xf32>, %g: tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{'parc.conv2d_weight_grad' op 'input' and 'weight' must have rank 4, got 3 and 4}}
  %0 = parc.conv2d_weight_grad %x, %g strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] groups 1 : tensor<1x1x4xf32>, tensor<1x2x2x2xf32> -> tensor<2x1x3x3xf32>
  return
}

// -----

func.func @max_pool2d_padding(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'parc.max_pool2d' op padding 2 exceeds half the kernel's 3}}
  %0 = parc.max_pool2d %x kernel [3, 3] strides [1, 1] padding [0, 0, 2, 0] dilations [1, 1] : tensor<1x1x4x4xf32>
  return
}

// -----

func.func @avg_pool2d_window(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'parc.avg_pool2d' op the dilated kernel's width (5) exceeds the padded input's (4)}}
  %0 = parc.avg_pool2d %x kernel [1, 5] strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x4x4xf32>
  return
}

// -----

func.func @max_pool2d_kernel(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'parc.max_pool2d' op kernel sizes must be positive, got 0}}
  %0 = parc.max_pool2d %x kernel [0, 1] strides [1, 1] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x4x4xf32>
  return
}

// -----

func.func @avg_pool2d_grad_shape(%g: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'parc.avg_pool2d_grad' op 'gradient' has type 'tensor<1x1x3x3xf32>', but the pooling's result has shape [1, 1, 2, 2]}}
  %0 = parc.avg_pool2d_grad %g kernel [2, 2] strides [2, 2] padding [0, 0, 0, 0] dilations [1, 1] : tensor<1x1x3x3xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @batch_norm_groups(%x: tensor<6x2x2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'parc.batch_norm' op 'groups' (4) must be positive and divide the batch (6)}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 groups = 4 : tensor<6x2x2x2xf32>, tensor<2xf32>
  return
}

// -----

func.func @batch_norm_negative_groups(%x: tensor<6x2x2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'parc.batch_norm_grad' op 'groups' (-2) must be positive and divide the batch (6)}}
  %dx, %dg, %db = parc.batch_norm_grad %x, %c, %x eps = 1.0e-5 groups = -2 : tensor<6x2x2x2xf32>, tensor<2xf32>
  return
}

// -----

func.func @batch_norm_one_value_per_group(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // An unbiased variance needs two values.
  // expected-error @+1 {{'parc.batch_norm' op each of the 2 groups has fewer than 2 values per channel}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 groups = 2 : tensor<2x3xf32>, tensor<3xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'parc.batch_norm' op operand 'input' must have rank >= 2 ([batch, channels, ...]), got rank 1}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x3x2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'parc.batch_norm' op operand 'gamma' must have shape [3] (the channels, dimension 1 of 'input')}}
  %y, %m, %v = parc.batch_norm %x, %c, %c eps = 1.0e-5 : tensor<2x3x2x2xf32>, tensor<2xf32>
  return
}
