//===- MpiCollectives.cpp - the cpu backend's collectives over MPI --------===//

#include "cpu/MpiCollectives.h"

#include "core/Fatal.h"
#include "cpu/Blocks.h"

#include <string>

using namespace parcrt;
using namespace parcrt::cpu;

MpiCollectives::~MpiCollectives() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  for (auto &[axes, comm] : communicators)
    if (comm != MPI_COMM_SELF)
      MPI_Comm_free(&comm);
}

MPI_Comm MpiCollectives::communicator(const std::vector<int> &axes) {
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

static MPI_Datatype reducible(const char *op, parcrt_dtype dtype) {
  switch (dtype) {
  case PARCRT_F32:
    return MPI_FLOAT;
  case PARCRT_I32:
    return MPI_INT32_T;
  case PARCRT_I64:
    return MPI_INT64_T;
  default:
    fatal(std::string(op) +
          ": the cpu backend reduces f32, i32 and i64 tensors only");
  }
}

void MpiCollectives::allReduce(const std::vector<int> &axes, bool max,
                               const TensorRef *t) {
  MPI_Datatype type = reducible("all_reduce", t[0].dtype);
  const void *send = t[0].data == t[1].data ? MPI_IN_PLACE : t[0].data;
  MPI_Allreduce(send, t[1].data, static_cast<int>(t[1].numElements()), type,
                max ? MPI_MAX : MPI_SUM, communicator(axes));
}

void MpiCollectives::allGather(const std::vector<int> &axes, int64_t dim,
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

void MpiCollectives::reduceScatter(const std::vector<int> &axes, int64_t dim,
                                   const TensorRef *t) {
  MPI_Datatype type = reducible("reduce_scatter", t[0].dtype);
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
                           static_cast<int>(out.numElements()), type, MPI_SUM,
                           communicator(axes));
}

void MpiCollectives::allToAll(const std::vector<int> &axes, int64_t splitDim,
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
