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

/* activation_grad's kind (its ints[0]). */
typedef enum parcrt_activation {
  PARCRT_RELU = 0,
  PARCRT_SIGMOID = 1,
  PARCRT_SILU = 2,
  PARCRT_TANH = 3,
  PARCRT_GELU_ERF = 4,
  PARCRT_GELU_TANH = 5,
} parcrt_activation;

/* compare's predicate (its ints[0]). */
typedef enum parcrt_comparison {
  PARCRT_EQ = 0,
  PARCRT_NE = 1,
  PARCRT_LT = 2,
  PARCRT_LE = 3,
  PARCRT_GT = 4,
  PARCRT_GE = 5,
} parcrt_comparison;

typedef struct parcrt_context parcrt_context;

/* Entry points of a generated program (defined in its object file). */
extern const char parc_program_json[];
void parc_program_step(parcrt_context *ctx);
/* Run once before the first step by the stages of an asynchronous pipeline
   (PipeDream-2BW), with an arena of their own; weak: other programs have
   none. */
extern const char parc_prologue_json[] __attribute__((weak));
void parc_prologue_step(parcrt_context *ctx) __attribute__((weak));

/* Every op's entry point (operands, results and attributes listed in
   Ops.def). */
#define PARCRT_DECLARE_OP(name)                                                \
  void parcrt_##name(parcrt_context *, const int64_t *, const int64_t *,       \
                     const double *);
#define PARCRT_COMPUTE_OP(name, tensors, results, kind, call)                  \
  PARCRT_DECLARE_OP(name)
#define PARCRT_COLLECTIVE_OP(name, call) PARCRT_DECLARE_OP(name)
#define PARCRT_POINT_TO_POINT_OP(name, what, call) PARCRT_DECLARE_OP(name)
#include "parcrt/Ops.def"
#undef PARCRT_COMPUTE_OP
#undef PARCRT_COLLECTIVE_OP
#undef PARCRT_POINT_TO_POINT_OP
#undef PARCRT_DECLARE_OP

#ifdef __cplusplus
}
#endif

#endif /* PARCRT_PARCRT_H */
