//===- NcclCommunicator.h - communication of the cuda backend ---*- C++ -*-===//
//
// One NCCL communicator per distinct group of mesh axes, created lazily on
// the group's first collective: the group's first member generates the
// ncclUniqueId and sends it to the other members over MPI. Collectives run
// on a dedicated communication stream, ordered after the compute stream and
// before the compute stream's next work with events. NCCL moves whole
// buffers along their leading dimension, so gathers and scatters along an
// inner dimension are packed and unpacked with a transpose kernel on the
// compute stream.
//
// Point-to-point: ncclSend and ncclRecv, each in its own ncclGroupStart/End,
// on the communication stream over a communicator of the two ranks
// {min(me, peer), max(me, peer)}, created lazily the same way (the lower
// rank generates the id): the first send or recv between a pair waits until
// the peer reaches its first one with this rank. A send completes only once
// the peer posts the matching recv (stream-ordered, and the compute stream
// waits for it, so the tensor may be reused at once), and NCCL has no tags:
// messages between a pair match in the order they are posted, whatever
// their channel, and a size mismatch is NCCL's error, not ours. Schedules
// must therefore order their point-to-point calls consistently on both
// sides (a ring where every rank sends before receiving deadlocks).
// Channels name a stuck send in the watchdog's message. A message to this
// rank itself is a stream-ordered device copy queued per channel.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CUDA_NCCLCOMMUNICATOR_H
#define PARCRT_CUDA_NCCLCOMMUNICATOR_H

#include "CudaSupport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace parcrt::cuda {

class NcclCommunicator final : public Communicator {
public:
  /// `mesh` and `scratch` must outlive this object. With `alwaysNccl`,
  /// groups of one rank also go through NCCL (to test that path on one
  /// GPU); otherwise their collectives are local copies.
  NcclCommunicator(const MeshInfo &mesh, cudaStream_t compute, Scratch &scratch,
                   bool alwaysNccl);
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;
  ~NcclCommunicator() override;

  /// Creates the communication stream and events; false with `error` set
  /// on failure.
  bool initialize(std::string *error);

  void allReduce(const std::vector<int> &axes, bool max,
                 const TensorRef *t) override;
  void allGather(const std::vector<int> &axes, int64_t dim,
                 const TensorRef *t) override;
  void reduceScatter(const std::vector<int> &axes, int64_t dim,
                     const TensorRef *t) override;
  void allToAll(const std::vector<int> &axes, int64_t splitDim,
                int64_t concatDim, const TensorRef *t) override;
  void send(int peer, int64_t channel, const TensorRef &t) override;
  void recv(int peer, int64_t channel, const TensorRef &t) override;
  /// Waits for each pending send (watched), then for the communication
  /// stream (errors are fatal).
  void synchronize(Watchdog *watchdog) override;

  // The cuda backend's local group ops, t = {operand, result}.
  void allSlice(const std::vector<int> &axes, int64_t dim, const TensorRef *t);
  void axisIndex(const std::vector<int> &axes, const TensorRef &result);

private:
  struct Group {
    std::vector<int> members; // world ranks in group order
    int index = 0;            // this rank's position in `members`
    ncclComm_t comm = nullptr;
  };

  /// The group over `axes` (its communicator not necessarily created).
  Group &group(const std::vector<int> &axes);
  /// Whether the group's collectives go through NCCL.
  bool usesNccl(const Group &group) const {
    return group.members.size() > 1 || alwaysNccl;
  }
  /// The group's communicator, created on first use.
  ncclComm_t communicator(const std::vector<int> &axes, Group &group);
  /// The communicator of this rank and `peer`, created on first use.
  ncclComm_t pairCommunicator(int peer);

  /// Orders the communication stream after the compute stream's work.
  void beginCommunication();
  /// Orders the compute stream's next work after the communication.
  void endCommunication();

  /// result = operand on the compute stream (a one-rank group).
  void localCopy(const TensorRef *t);

  const MeshInfo &mesh;
  cudaStream_t compute;
  Scratch &scratch;
  bool alwaysNccl;
  cudaStream_t stream = nullptr;
  cudaEvent_t computeDone = nullptr, communicationDone = nullptr;
  std::map<std::vector<int>, Group> groups;
  /// Keyed by {min(me, peer), max(me, peer)}.
  std::map<std::pair<int, int>, ncclComm_t> pairs;

  struct PendingSend {
    int peer;
    int64_t channel;
    cudaEvent_t done; // recorded on the communication stream
  };
  std::vector<PendingSend> pendingSends;

  /// A message to this rank itself, in device memory.
  struct SelfMessage {
    void *data;
    size_t bytes;
  };
  std::map<int64_t, std::deque<SelfMessage>> selfMessages;
};

} // namespace parcrt::cuda

#endif // PARCRT_CUDA_NCCLCOMMUNICATOR_H
