//===- MpiCommunicator.cpp - the cpu backend's communication over MPI -----===//

#include "cpu/MpiCommunicator.h"

#include "core/Fatal.h"
#include "core/Watchdog.h"
#include "cpu/Blocks.h"
#include "parcrt/Safetensors.h"

#include <cstring>
#include <string>

using namespace parcrt;
using namespace parcrt::cpu;

MpiCommunicator::MpiCommunicator(const MeshInfo &mesh) : mesh(mesh) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return;
  MPI_Comm_dup(MPI_COMM_WORLD, &pointToPoint);
  int *upperBound = nullptr, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upperBound, &flag);
  if (flag && upperBound)
    tagUpperBound = *upperBound;
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  synchronize(nullptr);
  for (auto &[axes, comm] : communicators)
    if (comm != MPI_COMM_SELF)
      MPI_Comm_free(&comm);
  if (pointToPoint != MPI_COMM_NULL)
    MPI_Comm_free(&pointToPoint);
}

MPI_Comm MpiCommunicator::communicator(const std::vector<int> &axes) {
  auto it = communicators.find(axes);
  if (it != communicators.end())
    return it->second;
  std::vector<int> members = mesh.group(axes);
  MPI_Comm comm = MPI_COMM_SELF;
  if (members.size() > 1) {
    MPI_Group world, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    // Listing the members in group order makes communicator rank equal
    // index in group.
    MPI_Group_incl(world, static_cast<int>(members.size()), members.data(),
                   &group);
    // The tag only has to agree among the members, which share `axes`.
    int tag = 0;
    for (int axis : axes)
      tag = tag * 31 + axis + 1;
    MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
  }
  communicators.emplace(axes, comm);
  return comm;
}

namespace {
/// An MPI reduction: the element type and the operation.
struct Reduction {
  MPI_Datatype type;
  MPI_Op op;
};

/// MPI has no 16-bit float: f16 and bf16 are reduced by user operations
/// that add (or take the max) in f32 and round each partial result to
/// nearest even, as NCCL's bf16 sums do.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float), bool Max>
void reduceHalfFloats(void *in, void *inout, int *count, MPI_Datatype *) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *count; ++i) {
    float x = Widen(a[i]), y = Widen(b[i]);
    b[i] = Narrow(Max ? (x > y ? x : y) : x + y);
  }
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
MPI_Op halfFloatOp(bool max) {
  // Created on first use, after MPI_Init; freed by MPI_Finalize.
  static MPI_Op sum = [] {
    MPI_Op op;
    MPI_Op_create(&reduceHalfFloats<Widen, Narrow, false>, 1, &op);
    return op;
  }();
  static MPI_Op maximum = [] {
    MPI_Op op;
    MPI_Op_create(&reduceHalfFloats<Widen, Narrow, true>, 1, &op);
    return op;
  }();
  return max ? maximum : sum;
}
} // namespace

static Reduction reduction(const char *op, parcrt_dtype dtype, bool max) {
  MPI_Op builtin = max ? MPI_MAX : MPI_SUM;
  switch (dtype) {
  case PARCRT_F32:
    return {MPI_FLOAT, builtin};
  case PARCRT_I32:
    return {MPI_INT32_T, builtin};
  case PARCRT_I64:
    return {MPI_INT64_T, builtin};
  case PARCRT_BF16:
    return {MPI_UINT16_T, halfFloatOp<bfloat16ToFloat, floatToBfloat16>(max)};
  case PARCRT_F16:
    return {MPI_UINT16_T, halfFloatOp<halfToFloat, floatToHalf>(max)};
  }
  fatal(std::string(op) + ": unknown dtype " +
        std::to_string(static_cast<int>(dtype)));
}

void MpiCommunicator::allReduce(const std::vector<int> &axes, bool max,
                                const TensorRef *t) {
  Reduction r = reduction("all_reduce", t[0].dtype, max);
  const void *send = t[0].data == t[1].data ? MPI_IN_PLACE : t[0].data;
  MPI_Allreduce(send, t[1].data, static_cast<int>(t[1].numElements()), r.type,
                r.op, communicator(axes));
}

void MpiCommunicator::allGather(const std::vector<int> &axes, int64_t dim,
                                const TensorRef *t) {
  const TensorRef &in = t[0], &out = t[1];
  int count = static_cast<int>(mesh.group(axes).size());
  int bytes = static_cast<int>(in.bytes());
  int64_t outer = outerCount(in, dim);
  MPI_Comm comm = communicator(axes);
  // With nothing before `dim`, the blocks in group order are the result.
  if (outer == 1) {
    MPI_Allgather(in.data, bytes, MPI_BYTE, out.data, bytes, MPI_BYTE, comm);
    return;
  }
  std::vector<uint8_t> staging(static_cast<size_t>(bytes) * count);
  MPI_Allgather(in.data, bytes, MPI_BYTE, staging.data(), bytes, MPI_BYTE,
                comm);
  int64_t length = in.shape[dim];
  for (int member = 0; member < count; ++member)
    copyAlongDim(staging.data() + static_cast<size_t>(member) * bytes, length,
                 0, out.data, out.shape[dim], member * length, length, outer,
                 innerBytes(in, dim));
}

void MpiCommunicator::reduceScatter(const std::vector<int> &axes, int64_t dim,
                                    const TensorRef *t) {
  Reduction r = reduction("reduce_scatter", t[0].dtype, false);
  const TensorRef &in = t[0], &out = t[1];
  int count = static_cast<int>(mesh.group(axes).size());
  int64_t length = out.shape[dim];
  int64_t outer = outerCount(in, dim);
  size_t inner = innerBytes(in, dim);
  // Chunk q of `in` along `dim` becomes the q-th contiguous block.
  std::vector<uint8_t> staging(in.bytes());
  for (int member = 0; member < count; ++member)
    copyAlongDim(in.data, in.shape[dim], member * length,
                 staging.data() + member * out.bytes(), length, 0, length,
                 outer, inner);
  MPI_Reduce_scatter_block(staging.data(), out.data,
                           static_cast<int>(out.numElements()), r.type, r.op,
                           communicator(axes));
}

void MpiCommunicator::allToAll(const std::vector<int> &axes, int64_t splitDim,
                               int64_t concatDim, const TensorRef *t) {
  const TensorRef &in = t[0], &out = t[1];
  int count = static_cast<int>(mesh.group(axes).size());
  // Every chunk has the input's shape with splitDim divided by the count.
  TensorRef chunk = in;
  chunk.shape[splitDim] /= count;
  size_t chunkBytes = chunk.bytes();
  std::vector<uint8_t> send(in.bytes()), receive(out.bytes());
  for (int member = 0; member < count; ++member)
    copyAlongDim(in.data, in.shape[splitDim], member * chunk.shape[splitDim],
                 send.data() + member * chunkBytes, chunk.shape[splitDim], 0,
                 chunk.shape[splitDim], outerCount(in, splitDim),
                 innerBytes(in, splitDim));
  MPI_Alltoall(send.data(), static_cast<int>(chunkBytes), MPI_BYTE,
               receive.data(), static_cast<int>(chunkBytes), MPI_BYTE,
               communicator(axes));
  int64_t length = chunk.shape[concatDim];
  for (int member = 0; member < count; ++member)
    copyAlongDim(receive.data() + member * chunkBytes, length, 0, out.data,
                 out.shape[concatDim], member * length, length,
                 outerCount(chunk, concatDim), innerBytes(chunk, concatDim));
}

int MpiCommunicator::tag(int64_t channel) const {
  if (pointToPoint == MPI_COMM_NULL)
    fatal("send/recv: MPI is not initialized");
  if (channel < 0 || channel > tagUpperBound)
    fatal("send/recv: channel " + std::to_string(channel) +
          " is outside the MPI tags [0, " + std::to_string(tagUpperBound) +
          "]");
  return static_cast<int>(channel);
}

void MpiCommunicator::send(int peer, int64_t channel, const TensorRef &t) {
  // A staging copy lets the caller reuse t's arena memory at once; the
  // receiver need not have posted its receive (pipeline schedules send to
  // both neighbours before receiving).
  int mpiTag = tag(channel);
  pending.push_back({peer, channel, std::vector<uint8_t>(t.bytes()), {}});
  PendingSend &message = pending.back();
  std::memcpy(message.staging.data(), t.data, message.staging.size());
  MPI_Isend(message.staging.data(), static_cast<int>(message.staging.size()),
            MPI_BYTE, peer, mpiTag, pointToPoint, &message.request);
}

void MpiCommunicator::recv(int peer, int64_t channel, const TensorRef &t) {
  // A matched probe reads the size of exactly the message it then receives.
  MPI_Message message;
  MPI_Status status;
  MPI_Mprobe(peer, tag(channel), pointToPoint, &message, &status);
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  if (static_cast<size_t>(bytes) != t.bytes())
    fatal("recv from rank " + std::to_string(peer) + " (channel " +
          std::to_string(channel) + "): the message has " +
          std::to_string(bytes) + " bytes, the tensor " +
          std::to_string(t.bytes()));
  MPI_Mrecv(t.data, bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE);
}

void MpiCommunicator::synchronize(Watchdog *watchdog) {
  for (PendingSend &message : pending) {
    Watched watched(watchdog, "send to", message.peer, message.channel);
    MPI_Wait(&message.request, MPI_STATUS_IGNORE);
  }
  pending.clear();
}
