/*===- parcrt.h - the C ABI between generated programs and libparcrt ------===*
 *
 * A compiled rank program is a straight-line sequence of calls, one per op:
 *
 *   void parcrt_<op>(parcrt_context *ctx, const int64_t *tensors,
 *                    const int64_t *ints, const double *floats);
 *
 * `tensors` points at constant descriptors, operands first then results,
 * each PARCRT_TENSOR_WORDS int64 words:
 *
 *   [0] byte offset of the tensor in the rank's arena
 *   [1] dtype (parcrt_dtype)
 *   [2] rank (<= PARCRT_MAX_RANK)
 *   [3 .. 3 + rank) sizes, row-major; unused words are 0
 *
 * `ints` and `floats` carry the op's attributes (listed per function below);
 * both may be empty. Everything a call reads is static: the same binary
 * serves every rank of an SPMD program, and a rank's identity lives in the
 * context. Communication groups are named by mesh axes: a group over axes
 * A holds the ranks that differ from this one only in A, ordered by their
 * linearized coordinates over A (first axis major); `ints` give a group as
 * a count followed by the mesh axis positions.
 *
 * The program itself is described by a JSON document the compiler embeds
 * (see docs/runtime.md): mesh, arena size, and per argument and result its
 * name, role, dtype, global and local shapes, sharding and arena offset.
 *
 *===----------------------------------------------------------------------===*/

#ifndef PARCRT_PARCRT_H
#define PARCRT_PARCRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARCRT_MAX_RANK 8
#define PARCRT_TENSOR_WORDS (3 + PARCRT_MAX_RANK)

typedef enum parcrt_dtype {
  PARCRT_F32 = 0,
  PARCRT_F16 = 1,
  PARCRT_BF16 = 2,
  PARCRT_I32 = 3,
  PARCRT_I64 = 4,
} parcrt_dtype;

typedef struct parcrt_context parcrt_context;

/* Entry points of a generated program (defined in its object file). */
extern const char parc_program_json[];
void parc_program_step(parcrt_context *ctx);

/* Elementwise: numpy broadcasting of operand 0 and 1 into the result. */
void parcrt_add(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_sub(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_mul(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_div(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_pow(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* operands: condition (nonzero = true), on_true, on_false; broadcast. */
void parcrt_select(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Unary: one operand, one result of the same shape. */
void parcrt_neg(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_exp(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_log(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_tanh(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_relu(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_sigmoid(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_silu(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* To the result's dtype (float to integer truncates toward zero). */
void parcrt_cast(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_sqrt(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_erf(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* ints: [tanh_form (0 = erf, 1 = tanh)] */
void parcrt_gelu(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Batched matmul with numpy batch broadcasting.
   ints: [transpose_lhs, transpose_rhs] */
void parcrt_matmul(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* ints: [axis] */
void parcrt_softmax(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* operands: x, gamma, beta. floats: [epsilon] */
void parcrt_layer_norm(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* operands: x, gamma. floats: [epsilon] */
void parcrt_rms_norm(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* operands: table [V, D], ids, and optionally a scalar i64 shard index:
   the table is block `shard` of a larger one and ids outside it give zero
   rows. ints: [has_shard] */
void parcrt_embedding(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* operands: x [S.., C], indices [S..], optional shard as for embedding.
   ints: [has_shard] */
void parcrt_take(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Copies the elements (same count, new shape). */
void parcrt_reshape(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* ints: [perm_0, .., perm_rank-1] */
void parcrt_transpose(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* ints: [num_axes, axes..., keepdims] */
void parcrt_reduce_sum(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_reduce_mean(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_reduce_max(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* operands: n inputs. ints: [num_inputs, axis] */
void parcrt_concat(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* ints: [offsets_0..rank-1, strides_0..rank-1] (sizes are the result's) */
void parcrt_slice(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* A constant: `floats` holds the values (converted to the result dtype);
   ints: [num_values] (1 = splat). */
void parcrt_constant(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* operands: q [B,H,S,D], k [B,H,T,D], v [B,H,T,E]. ints: [causal].
   floats: [scale] */
void parcrt_attention(parcrt_context *, const int64_t *, const int64_t *, const double *);
/* operands: logits [S.., C], labels [S..]; result: scalar mean loss. */
void parcrt_cross_entropy(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Gradients (emitted by autodiff).
   broadcast_to: numpy broadcast of operand 0 to the result's shape.
   slice_grad: zeros of the result's shape with operand 0 placed at
     offsets[i] + j * strides[i]. ints: [offsets_0..rank-1, strides_0..rank-1]
   activation_grad: operands x, g; result g * f'(x).
     ints: [kind (0 relu, 1 sigmoid, 2 silu, 3 tanh, 4 gelu erf, 5 gelu tanh)]
   softmax_grad: operands y (the softmax), g; y * (g - sum(g * y, axis)).
     ints: [axis]
   layer_norm_grad: operands x, gamma, g; results dx, dgamma, dbeta.
     floats: [epsilon]
   rms_norm_grad: operands x, gamma, g; results dx, dgamma. floats: [epsilon]
   embedding_grad: operands ids, g, optional shard; result: the table's
     gradient (scatter-add; with a shard, ids outside the block are skipped).
     ints: [has_shard]
   attention_grad: operands q, k, v, g; results dq, dk, dv. ints: [causal].
     floats: [scale]
   cross_entropy_grad: operands logits, labels, g (scalar); result
     (softmax(logits) - onehot(labels)) * g / count. ints: [count] */
void parcrt_broadcast_to(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_slice_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_activation_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_softmax_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_layer_norm_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_rms_norm_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_embedding_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_attention_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_cross_entropy_grad(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Optimizers.
   adamw_update: operands param, grad, m, v, step (f32 scalar, 1-based);
     results param', m', v'. floats: [lr, beta1, beta2, epsilon, weight_decay]
   sgd_update: operands param, grad, buffer; results param', buffer'.
     floats: [lr, momentum]
   clip_coefficient: operand sum of squares (scalar); result
     min(1, max_norm / (sqrt(sum) + 1e-6)). floats: [max_norm] */
void parcrt_adamw_update(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_sgd_update(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_clip_coefficient(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Collectives. ints start with the group (count, axis positions...).
   all_reduce ints: [group..., kind (0 = sum, 1 = max)]
   all_gather, reduce_scatter, all_slice ints: [group..., dim]
   all_to_all ints: [group..., split_dim, concat_dim]
   axis_index: no operand; result scalar i64. ints: [group...] */
void parcrt_all_reduce(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_all_gather(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_reduce_scatter(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_all_to_all(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_all_slice(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_axis_index(parcrt_context *, const int64_t *, const int64_t *, const double *);

/* Point-to-point with the rank that agrees with this one on every mesh
   axis but `axis`, where its coordinate is `coordinate` (a pipeline stage).
   Messages between one pair on one channel arrive in order.
   parcrt_send: operand: the tensor. parcrt_recv: result: the tensor.
   ints: [axis, coordinate, channel] */
void parcrt_send(parcrt_context *, const int64_t *, const int64_t *, const double *);
void parcrt_recv(parcrt_context *, const int64_t *, const int64_t *, const double *);

#ifdef __cplusplus
}
#endif

#endif /* PARCRT_PARCRT_H */
