//===- NcclCommunicator.cpp - communication of the cuda backend -----------===//
//
// Semantics (as lib/Interp/CollectiveKernels.cpp): a group over mesh axes
// holds the ranks that differ from this one only in those axes, ordered by
// their linearized coordinates over the axes (first axis major).
//   all_reduce:     elementwise sum or max over the group;
//   all_gather:     the members' operands concatenated along `dim`;
//   reduce_scatter: the sum, of which member i keeps chunk i along `dim`;
//   all_to_all:     member q sends chunk r (along split_dim) to member r,
//                   which concatenates what it receives along concat_dim
//                   in sender order;
//   all_slice:      this member's chunk along `dim` (no communication);
//   axis_index:     this member's index in the group;
//   send/recv:      one tensor to/from a world rank (the header says how
//                   NCCL orders them).
//
//===----------------------------------------------------------------------===//

#include "NcclCommunicator.h"

#include "Kernels.h"
#include "core/Watchdog.h"

// Only MPI's C API is used; its C++ bindings warn under -Wextra.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstring>

using namespace parcrt;
using namespace parcrt::cuda;

namespace {

void checkNccl(ncclResult_t result, const char *what, ncclComm_t comm) {
  if (result == ncclSuccess)
    return;
  const char *detail = ncclGetLastError(comm);
  fatal("%s failed: %s%s%s", what, ncclGetErrorString(result),
        detail && *detail ? ": " : "", detail ? detail : "");
}

ncclDataType_t ncclType(parcrt_dtype dtype) {
  switch (dtype) {
  case PARCRT_F32:
    return ncclFloat32;
  case PARCRT_F16:
    return ncclFloat16;
  case PARCRT_BF16:
    return ncclBfloat16;
  case PARCRT_I32:
    return ncclInt32;
  case PARCRT_I64:
    return ncclInt64;
  }
  fatal("no NCCL type for dtype %d", static_cast<int>(dtype));
}

/// The product of shape[begin, end).
int64_t product(const TensorRef &t, int begin, int end) {
  int64_t n = 1;
  for (int d = begin; d < end; ++d)
    n *= t.shape[d];
  return n;
}

/// dst[b][a][c] = src[a][b][c].
void swapLeading(void *dst, const void *src, size_t elementBytes, int64_t a,
                 int64_t b, int64_t c, cudaStream_t stream) {
  const int64_t shape[3] = {a, b, c};
  const int64_t perm[3] = {1, 0, 2};
  check(launchPermute(dst, src, elementBytes, 3, shape, perm, stream),
        "collective pack/unpack kernel");
}

size_t alignUp(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// An MPI tag naming the group over `axes` (in order) between its leader
/// and the other members.
int groupTag(const std::vector<int> &axes, size_t numMeshAxes) {
  int64_t tag = 0;
  for (int axis : axes)
    tag = tag * static_cast<int64_t>(numMeshAxes + 1) + axis + 1;
  tag += 1000;
  int *upperBound = nullptr, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upperBound, &flag);
  int64_t limit = flag && upperBound ? *upperBound : 32767;
  if (tag > limit)
    fatal("too many mesh axes to name the NCCL group by an MPI tag "
          "(%lld > %lld)",
          static_cast<long long>(tag), static_cast<long long>(limit));
  return static_cast<int>(tag);
}

/// The MPI tag of a pair's id, below groupTag's range.
constexpr int kPairTag = 999;

/// A communicator over the world ranks `members`, of which this rank is
/// member `index`: the first member generates the id and sends it to the
/// others over MPI (with `tag`), so only the members take part, whatever
/// the other ranks are doing.
ncclComm_t createCommunicator(const std::vector<int> &members, int index,
                              int tag) {
  int size = static_cast<int>(members.size());
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (index == 0)
    checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr);
  if (size > 1) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
      fatal("MPI is not initialized: cannot create an NCCL communicator "
            "over %d ranks",
            size);
    if (index == 0) {
      for (int member = 1; member < size; ++member)
        MPI_Send(&id, sizeof(id), MPI_BYTE, members[member], tag,
                 MPI_COMM_WORLD);
    } else {
      MPI_Recv(&id, sizeof(id), MPI_BYTE, members[0], tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
  }
  ncclComm_t comm = nullptr;
  checkNccl(ncclCommInitRank(&comm, size, id, index), "ncclCommInitRank",
            nullptr);
  return comm;
}

} // namespace

NcclCommunicator::NcclCommunicator(const MeshInfo &mesh, cudaStream_t compute,
                                   Scratch &scratch, bool alwaysNccl)
    : mesh(mesh), compute(compute), scratch(scratch), alwaysNccl(alwaysNccl) {}

NcclCommunicator::~NcclCommunicator() {
  if (stream)
    cudaStreamSynchronize(stream);
  for (auto &entry : groups)
    if (entry.second.comm)
      ncclCommDestroy(entry.second.comm);
  for (auto &entry : pairs)
    ncclCommDestroy(entry.second);
  for (PendingSend &sent : pendingSends)
    cudaEventDestroy(sent.done);
  for (auto &entry : selfMessages)
    for (SelfMessage &message : entry.second)
      cudaFree(message.data);
  if (computeDone)
    cudaEventDestroy(computeDone);
  if (communicationDone)
    cudaEventDestroy(communicationDone);
  if (stream)
    cudaStreamDestroy(stream);
}

bool NcclCommunicator::initialize(std::string *error) {
  cudaError_t status =
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (status == cudaSuccess)
    status = cudaEventCreateWithFlags(&computeDone, cudaEventDisableTiming);
  if (status == cudaSuccess)
    status =
        cudaEventCreateWithFlags(&communicationDone, cudaEventDisableTiming);
  if (status != cudaSuccess && error)
    *error = std::string("cannot create the communication stream: ") +
             cudaGetErrorString(status);
  return status == cudaSuccess;
}

NcclCommunicator::Group &NcclCommunicator::group(const std::vector<int> &axes) {
  auto found = groups.find(axes);
  if (found != groups.end())
    return found->second;
  Group &created = groups[axes];
  created.members = mesh.group(axes);
  created.index = static_cast<int>(mesh.indexInGroup(axes));
  return created;
}

ncclComm_t NcclCommunicator::communicator(const std::vector<int> &axes,
                                          Group &group) {
  if (!group.comm)
    group.comm = createCommunicator(
        group.members, group.index,
        group.members.size() > 1 ? groupTag(axes, mesh.axisSizes.size()) : 0);
  return group.comm;
}

ncclComm_t NcclCommunicator::pairCommunicator(int peer) {
  std::pair<int, int> key = std::minmax(mesh.rank, peer);
  ncclComm_t &comm = pairs[key];
  if (!comm)
    comm = createCommunicator({key.first, key.second},
                              mesh.rank == key.first ? 0 : 1, kPairTag);
  return comm;
}

void NcclCommunicator::beginCommunication() {
  check(cudaEventRecord(computeDone, compute), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream, computeDone, 0), "cudaStreamWaitEvent");
}

void NcclCommunicator::endCommunication() {
  check(cudaEventRecord(communicationDone, stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(compute, communicationDone, 0),
        "cudaStreamWaitEvent");
}

void NcclCommunicator::synchronize(Watchdog *watchdog) {
  for (PendingSend &sent : pendingSends) {
    {
      Watched watched(watchdog, "send to", sent.peer, sent.channel);
      check(cudaEventSynchronize(sent.done), "send");
    }
    check(cudaEventDestroy(sent.done), "cudaEventDestroy");
  }
  pendingSends.clear();
  check(cudaStreamSynchronize(stream), "communication stream");
}

void NcclCommunicator::localCopy(const TensorRef *t) {
  size_t bytes = t[1].bytes();
  if (bytes && t[0].data != t[1].data)
    check(cudaMemcpyAsync(t[1].data, t[0].data, bytes, cudaMemcpyDeviceToDevice,
                          compute),
          "collective copy");
}

void NcclCommunicator::allReduce(const std::vector<int> &axes, bool max,
                                 const TensorRef *t) {
  Group &g = group(axes);
  if (!usesNccl(g))
    return localCopy(t);
  size_t count = t[0].numElements();
  if (count == 0)
    return;
  ncclComm_t comm = communicator(axes, g);
  beginCommunication();
  checkNccl(ncclAllReduce(t[0].data, t[1].data, count, ncclType(t[0].dtype),
                          max ? ncclMax : ncclSum, comm, stream),
            "ncclAllReduce", comm);
  endCommunication();
}

void NcclCommunicator::allGather(const std::vector<int> &axes, int64_t dim,
                                 const TensorRef *t) {
  Group &g = group(axes);
  if (!usesNccl(g))
    return localCopy(t);
  const TensorRef &in = t[0], &out = t[1];
  size_t bytes = in.bytes(), size = dtypeBytes(in.dtype);
  if (bytes == 0)
    return;
  int64_t members = g.members.size();
  int64_t outer = product(in, 0, static_cast<int>(dim));
  ncclComm_t comm = communicator(axes, g);
  // NCCL gathers along the leading dimension: [members, in...].
  void *gathered = outer == 1 ? out.data : scratch.get(bytes * members);
  beginCommunication();
  checkNccl(ncclAllGather(in.data, gathered, bytes, ncclInt8, comm, stream),
            "ncclAllGather", comm);
  endCommunication();
  if (outer != 1) // [members, outer, rest] -> [outer, members, rest]
    swapLeading(out.data, gathered, size, members, outer,
                in.numElements() / outer, compute);
}

void NcclCommunicator::reduceScatter(const std::vector<int> &axes, int64_t dim,
                                     const TensorRef *t) {
  Group &g = group(axes);
  if (!usesNccl(g))
    return localCopy(t);
  const TensorRef &in = t[0], &out = t[1];
  size_t count = out.numElements();
  if (count == 0)
    return;
  int64_t members = g.members.size();
  int64_t outer = product(in, 0, static_cast<int>(dim));
  ncclComm_t comm = communicator(axes, g);
  // NCCL scatters chunks of the leading dimension: move chunk i of `dim`
  // to the front, [outer, members, rest] -> [members, outer, rest].
  const void *source = in.data;
  if (outer != 1) {
    void *packed = scratch.get(in.bytes());
    swapLeading(packed, in.data, dtypeBytes(in.dtype), outer, members,
                in.numElements() / (outer * members), compute);
    source = packed;
  }
  beginCommunication();
  checkNccl(ncclReduceScatter(source, out.data, count, ncclType(in.dtype),
                              ncclSum, comm, stream),
            "ncclReduceScatter", comm);
  endCommunication();
}

void NcclCommunicator::allToAll(const std::vector<int> &axes, int64_t splitDim,
                                int64_t concatDim, const TensorRef *t) {
  Group &g = group(axes);
  if (!usesNccl(g))
    return localCopy(t);
  const TensorRef &in = t[0], &out = t[1];
  size_t bytes = in.bytes(), size = dtypeBytes(in.dtype);
  if (bytes == 0)
    return;
  int64_t members = g.members.size();
  int64_t chunkCount = in.numElements() / members;
  size_t chunkBytes = bytes / members;
  TensorRef chunk = in;
  chunk.shape[splitDim] /= members;
  int64_t outerSplit = product(in, 0, static_cast<int>(splitDim));
  int64_t outerConcat = product(chunk, 0, static_cast<int>(concatDim));
  ncclComm_t comm = communicator(axes, g);
  char *area = nullptr;
  if (outerSplit != 1 || outerConcat != 1)
    area = static_cast<char *>(scratch.get(2 * alignUp(bytes)));
  // Chunk r of split_dim, contiguous: [outer, members, rest] ->
  // [members, outer, rest].
  const char *send = static_cast<const char *>(in.data);
  if (outerSplit != 1) {
    swapLeading(area, in.data, size, outerSplit, members,
                chunkCount / outerSplit, compute);
    send = area;
  }
  char *receive =
      outerConcat == 1 ? static_cast<char *>(out.data) : area + alignUp(bytes);
  beginCommunication();
  checkNccl(ncclGroupStart(), "ncclGroupStart", comm);
  for (int64_t peer = 0; peer < members; ++peer) {
    checkNccl(ncclSend(send + peer * chunkBytes, chunkBytes, ncclInt8,
                       static_cast<int>(peer), comm, stream),
              "ncclSend", comm);
    checkNccl(ncclRecv(receive + peer * chunkBytes, chunkBytes, ncclInt8,
                       static_cast<int>(peer), comm, stream),
              "ncclRecv", comm);
  }
  checkNccl(ncclGroupEnd(), "ncclGroupEnd (all_to_all)", comm);
  endCommunication();
  // Sender q's chunk goes to block q of concat_dim:
  // [members, outer, rest] -> [outer, members, rest].
  if (outerConcat != 1)
    swapLeading(out.data, receive, size, members, outerConcat,
                chunkCount / outerConcat, compute);
}

void NcclCommunicator::allSlice(const std::vector<int> &axes, int64_t dim,
                                const TensorRef *t) {
  Group &g = group(axes);
  const TensorRef &in = t[0], &out = t[1];
  int64_t members = g.members.size();
  size_t size = dtypeBytes(in.dtype);
  int64_t inner = product(in, static_cast<int>(dim) + 1, in.rank);
  int64_t width = in.shape[dim] / members * inner;
  const char *first =
      static_cast<const char *>(in.data) + g.index * width * size;
  check(launchCopy2D(out.data, width, first, members * width, width,
                     product(in, 0, static_cast<int>(dim)), size, compute),
        "all_slice kernel");
}

void NcclCommunicator::axisIndex(const std::vector<int> &axes,
                                 const TensorRef &result) {
  check(launchFill(result.data, result.dtype, 1, nullptr, group(axes).index,
                   compute),
        "axis_index kernel");
}

void NcclCommunicator::send(int peer, int64_t channel, const TensorRef &t) {
  size_t bytes = t.bytes();
  if (peer == mesh.rank) {
    // A send to oneself in its own NCCL group would wait for a recv queued
    // behind it on the same stream.
    void *data = nullptr;
    check(cudaMallocAsync(&data, bytes ? bytes : 1, compute),
          "cudaMallocAsync (send to this rank)");
    if (bytes)
      check(cudaMemcpyAsync(data, t.data, bytes, cudaMemcpyDeviceToDevice,
                            compute),
            "send to this rank");
    selfMessages[channel].push_back({data, bytes});
    return;
  }
  ncclComm_t comm = pairCommunicator(peer);
  beginCommunication();
  checkNccl(ncclGroupStart(), "ncclGroupStart", comm);
  checkNccl(
      ncclSend(t.data, bytes, ncclInt8, peer > mesh.rank ? 1 : 0, comm, stream),
      "ncclSend", comm);
  checkNccl(ncclGroupEnd(), "ncclGroupEnd (send)", comm);
  PendingSend sent{peer, channel, nullptr};
  check(cudaEventCreateWithFlags(&sent.done, cudaEventDisableTiming),
        "cudaEventCreate");
  check(cudaEventRecord(sent.done, stream), "cudaEventRecord");
  pendingSends.push_back(sent);
  endCommunication();
}

void NcclCommunicator::recv(int peer, int64_t channel, const TensorRef &t) {
  size_t bytes = t.bytes();
  if (peer == mesh.rank) {
    std::deque<SelfMessage> &queue = selfMessages[channel];
    if (queue.empty())
      fatal("recv from rank %d (channel %lld): no message was sent", peer,
            static_cast<long long>(channel));
    SelfMessage message = queue.front();
    queue.pop_front();
    if (message.bytes != bytes)
      fatal("recv from rank %d (channel %lld): the message has %zu bytes, "
            "the tensor %zu",
            peer, static_cast<long long>(channel), message.bytes, bytes);
    if (bytes)
      check(cudaMemcpyAsync(t.data, message.data, bytes,
                            cudaMemcpyDeviceToDevice, compute),
            "recv from this rank");
    check(cudaFreeAsync(message.data, compute),
          "cudaFreeAsync (recv from this rank)");
    return;
  }
  ncclComm_t comm = pairCommunicator(peer);
  beginCommunication();
  checkNccl(ncclGroupStart(), "ncclGroupStart", comm);
  checkNccl(
      ncclRecv(t.data, bytes, ncclInt8, peer > mesh.rank ? 1 : 0, comm, stream),
      "ncclRecv", comm);
  checkNccl(ncclGroupEnd(), "ncclGroupEnd (recv)", comm);
  endCommunication();
}
