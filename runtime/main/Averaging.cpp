//===- Averaging.cpp - local SGD's averaging of the replicas --------------===//

#include "main/Averaging.h"

#include "parcrt/Values.h"

#include <map>

using namespace parcrt;

bool parcrt::averagesAfter(const Program &program, int64_t step) {
  return program.localSgd && step % program.localSgd->syncEvery == 0;
}

void parcrt::averageReplicas(const Program &program,
                             const std::vector<Feedback> &feedback,
                             Backend &backend, uint8_t *arena) {
  const LocalSgd &localSgd = *program.localSgd;
  std::vector<int> axes = {localSgd.axis};
  double replicas = static_cast<double>(program.axisSizes[localSgd.axis]);
  // The replica count as a scalar of each dtype averaged, in backend memory.
  std::map<parcrt_dtype, void *> counts;
  auto countOf = [&](parcrt_dtype dtype) {
    void *&count = counts[dtype];
    if (!count) {
      uint8_t host[8] = {};
      encodeValues({replicas}, dtype, host);
      count = backend.allocate(dtypeBytes(dtype));
      backend.toArena(count, host, dtypeBytes(dtype));
    }
    TensorRef scalar;
    scalar.data = count;
    scalar.dtype = dtype;
    return scalar;
  };
  for (const Feedback &pair : feedback) {
    const ProgramArgument &argument = program.arguments[pair.argument];
    bool averaged = argument.role == ArgumentRole::Param ||
                    argument.role == ArgumentRole::Buffer ||
                    (localSgd.averageOptimizerState &&
                     argument.role == ArgumentRole::OptState);
    bool floating = argument.dtype == PARCRT_F32 ||
                    argument.dtype == PARCRT_F16 ||
                    argument.dtype == PARCRT_BF16;
    if (!averaged || !floating)
      continue;
    TensorRef block = getLocalBlock(program.results[pair.result], arena);
    TensorRef summed[2] = {block, block};
    backend.communicator().allReduce(axes, /*max=*/false, summed);
    TensorRef divided[3] = {block, countOf(argument.dtype), block};
    backend.binary('/', divided);
  }
  backend.synchronize();
  for (auto &[dtype, count] : counts)
    backend.release(count);
}
