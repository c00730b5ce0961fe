//===- MlpProgram.cpp - a hand-written compiled program for the launcher --===//
//
// What parc-compile emits for loss = sum(relu(x w1) w2) / 16, written by
// hand: serial (PARC_MLP_SHARDED=0, one rank) or Megatron-style on a 2x2
// mesh (PARC_MLP_SHARDED=1: x split over dp, w1 by columns and w2 by rows
// over tp, an all_reduce over tp, the loss a pending sum over dp). Both
// must print and write the same results.
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"

#if PARC_MLP_SHARDED
#define MESH R"({"axes":["dp","tp"],"sizes":[2,2]})"
#define X_SHARDING R"([["dp"],[]])"
#define W1_SHARDING R"([[],["tp"]])"
#define W2_SHARDING R"([["tp"],[]])"
#define LOSS_PARTIAL R"(["dp"])"
#define PARC_ROWS "2"
#define PARC_HIDDEN "8"
constexpr int64_t rows = 2, hidden = 8;
#else
#define MESH R"({"axes":[],"sizes":[]})"
#define X_SHARDING R"([[],[]])"
#define W1_SHARDING R"([[],[]])"
#define W2_SHARDING R"([[],[]])"
#define LOSS_PARTIAL R"([])"
#define PARC_ROWS "4"
#define PARC_HIDDEN "16"
constexpr int64_t rows = 4, hidden = 16;
#endif

// Arena offsets (bytes): x, w1, w2, h, relu(h), y (partial over tp when
// sharded), y, sum, 1/16, loss.
constexpr int64_t xAt = 0, w1At = 256, w2At = 1024, hAt = 1536, rAt = 2048,
                  pAt = 2560, yAt = 2688, sAt = 2816, cAt = 2820, lossAt = 2824;

extern "C" const char parc_program_json[] =
    R"({"version":1,"function":"forward","mesh":)" MESH
    R"(,"arena_bytes":2880,"arguments":[)"
    R"({"name":"x","role":"input","dtype":"F32","global_shape":[4,8],)"
    R"("local_shape":[)" PARC_ROWS R"(,8],"sharding":)" X_SHARDING
    R"(,"offset":0,"init":null,"checkpoint_shape":null},)"
    R"({"name":"w1","role":"param","dtype":"F32","global_shape":[8,16],)"
    R"("local_shape":[8,)" PARC_HIDDEN R"(],"sharding":)" W1_SHARDING
    R"(,"offset":256,"init":{"distribution":"normal","first":0.0,"second":0.5},)"
    R"("checkpoint_shape":[128]},)"
    R"({"name":"w2","role":"param","dtype":"F32","global_shape":[16,4],)"
    R"("local_shape":[)" PARC_HIDDEN R"(,4],"sharding":)" W2_SHARDING
    R"(,"offset":1024,"init":null,"checkpoint_shape":null}],)"
    R"("results":[)"
    R"({"name":"loss","dtype":"F32","global_shape":[],"local_shape":[],)"
    R"("sharding":[],"partial":)" LOSS_PARTIAL R"(,"offset":2824},)"
    R"({"name":"y","dtype":"F32","global_shape":[4,4],"local_shape":[)" PARC_ROWS
    R"(,4],"sharding":)" X_SHARDING R"(,"partial":[],"offset":2688}]})";

extern "C" void parc_program_step(parcrt_context *ctx) {
  static const int64_t plainMatmul[] = {0, 0, 0, 1, 1, 1};
  parcrt_matmul(
      ctx,
      tensors({{xAt, {rows, 8}}, {w1At, {8, hidden}}, {hAt, {rows, hidden}}})
          .data(),
      plainMatmul, nullptr);
  parcrt_relu(ctx,
              tensors({{hAt, {rows, hidden}}, {rAt, {rows, hidden}}}).data(),
              nullptr, nullptr);
  parcrt_matmul(
      ctx,
      tensors({{rAt, {rows, hidden}}, {w2At, {hidden, 4}}, {pAt, {rows, 4}}})
          .data(),
      plainMatmul, nullptr);
#if PARC_MLP_SHARDED
  static const int64_t sumOverTp[] = {1, 1, 0};
  parcrt_all_reduce(ctx, tensors({{pAt, {rows, 4}}, {yAt, {rows, 4}}}).data(),
                    sumOverTp, nullptr);
#else
  parcrt_reshape(ctx, tensors({{pAt, {rows, 4}}, {yAt, {rows, 4}}}).data(),
                 nullptr, nullptr);
#endif
  static const int64_t allAxes[] = {2, 0, 1, 0};
  parcrt_reduce_sum(ctx, tensors({{yAt, {rows, 4}}, {sAt, {}}}).data(), allAxes,
                    nullptr);
  static const int64_t splat[] = {1};
  static const double sixteenth[] = {1.0 / 16};
  parcrt_constant(ctx, tensors({{cAt, {}}}).data(), splat, sixteenth);
  parcrt_mul(ctx, tensors({{sAt, {}}, {cAt, {}}, {lossAt, {}}}).data(), nullptr,
             nullptr);
}
