//===- StageProgram.cpp - a hand-written two-stage pipeline ---------------===//
//
// MlpProgram's loss = sum(relu(x w1) w2) / 16 as two pipeline stages on a
// pp=2 x dp=2 mesh, one executable each (PARC_STAGE=0 or 1), x and y split
// over dp: stage 0 computes relu(x w1) and sends it to stage 1, which
// computes y and the loss (a pending sum over dp) and sends y back, so both
// stages return y. Launched as `mpirun -np 2 stage0 : -np 2 stage1`, it must
// print and write the serial MlpProgram's results.
//
//===----------------------------------------------------------------------===//

#include "Descriptors.h"

#define PARC_HEADER                                                            \
  R"({"version":1,"function":"forward",)"                                      \
  R"("mesh":{"axes":["pp","dp"],"sizes":[2,2]},"arena_bytes":2880,)"
#define PARC_Y                                                                 \
  R"({"name":"y","dtype":"F32","global_shape":[4,4],"local_shape":[2,4],)"     \
  R"("sharding":[["dp"],[]],"partial":[],"offset":2688})"

// Arena offsets (bytes): x, w1, w2, relu(x w1) before and after the relu, y,
// sum, 1/16, loss. Each stage uses its own.
constexpr int64_t xAt = 0, w1At = 256, w2At = 1024, hAt = 1536, rAt = 2048,
                  yAt = 2688, sAt = 2816, cAt = 2820, lossAt = 2824;
constexpr int64_t rows = 2, hidden = 16;
// parcrt_send/parcrt_recv ints: [channel, 1 axis, axis pp, peer's pp
// coordinate].
constexpr int64_t hiddenChannel = 0, yChannel = 1;

#if PARC_STAGE == 0
extern "C" const char parc_program_json[] = PARC_HEADER
    R"("stage":{"axis":"pp","index":0,"count":2},"arguments":[)"
    R"({"name":"x","role":"input","dtype":"F32","global_shape":[4,8],)"
    R"("local_shape":[2,8],"sharding":[["dp"],[]],"offset":0,"init":null,)"
    R"("checkpoint_shape":null},)"
    R"({"name":"w1","role":"param","dtype":"F32","global_shape":[8,16],)"
    R"("local_shape":[8,16],"sharding":[[],[]],"offset":256,)"
    R"("init":{"distribution":"normal","first":0.0,"second":0.5},)"
    R"("checkpoint_shape":[128]}],"results":[)" PARC_Y "]}";

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
  static const int64_t toStage1[] = {hiddenChannel, 1, 0, 1};
  parcrt_send(ctx, tensors({{rAt, {rows, hidden}}}).data(), toStage1, nullptr);
  static const int64_t fromStage1[] = {yChannel, 1, 0, 1};
  parcrt_recv(ctx, tensors({{yAt, {rows, 4}}}).data(), fromStage1, nullptr);
}
#else
extern "C" const char parc_program_json[] = PARC_HEADER
    R"("stage":{"axis":"pp","index":1,"count":2},"arguments":[)"
    R"({"name":"w2","role":"param","dtype":"F32","global_shape":[16,4],)"
    R"("local_shape":[16,4],"sharding":[[],[]],"offset":1024,"init":null,)"
    R"("checkpoint_shape":null}],"results":[)"
    R"({"name":"loss","dtype":"F32","global_shape":[],"local_shape":[],)"
    R"("sharding":[],"partial":["dp"],"offset":2824},)" PARC_Y "]}";

extern "C" void parc_program_step(parcrt_context *ctx) {
  static const int64_t fromStage0[] = {hiddenChannel, 1, 0, 0};
  parcrt_recv(ctx, tensors({{rAt, {rows, hidden}}}).data(), fromStage0,
              nullptr);
  static const int64_t plainMatmul[] = {0, 0, 0, 1, 1, 1};
  parcrt_matmul(
      ctx,
      tensors({{rAt, {rows, hidden}}, {w2At, {hidden, 4}}, {yAt, {rows, 4}}})
          .data(),
      plainMatmul, nullptr);
  static const int64_t toStage0[] = {yChannel, 1, 0, 0};
  parcrt_send(ctx, tensors({{yAt, {rows, 4}}}).data(), toStage0, nullptr);
  static const int64_t allAxes[] = {2, 0, 1, 0};
  parcrt_reduce_sum(ctx, tensors({{yAt, {rows, 4}}, {sAt, {}}}).data(), allAxes,
                    nullptr);
  static const int64_t splat[] = {1};
  static const double sixteenth[] = {1.0 / 16};
  parcrt_constant(ctx, tensors({{cAt, {}}}).data(), splat, sixteenth);
  parcrt_mul(ctx, tensors({{sAt, {}}, {cAt, {}}, {lossAt, {}}}).data(), nullptr,
             nullptr);
}
#endif
