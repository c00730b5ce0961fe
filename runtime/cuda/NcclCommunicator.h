//===- NcclCommunicator.h - collectives of the cuda backend -----*- C++ -*-===//
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
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CUDA_NCCLCOMMUNICATOR_H
#define PARCRT_CUDA_NCCLCOMMUNICATOR_H

#include "CudaSupport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <string>
#include <vector>

namespace parcrt::cuda {

class NcclCommunicator {
public:
  /// `mesh` and `scratch` must outlive this object. With `alwaysNccl`,
  /// groups of one rank also go through NCCL (to test that path on one
  /// GPU); otherwise their collectives are local copies.
  NcclCommunicator(const MeshInfo &mesh, cudaStream_t compute, Scratch &scratch,
                   bool alwaysNccl);
  NcclCommunicator(const NcclCommunicator &) = delete;
  NcclCommunicator &operator=(const NcclCommunicator &) = delete;
  ~NcclCommunicator();

  /// Creates the communication stream and events; false with `error` set
  /// on failure.
  bool initialize(std::string *error);

  // t = {operand, result}, as Backend's collectives.
  void allReduce(const std::vector<int> &axes, bool max, const TensorRef *t);
  void allGather(const std::vector<int> &axes, int64_t dim, const TensorRef *t);
  void reduceScatter(const std::vector<int> &axes, int64_t dim,
                     const TensorRef *t);
  void allToAll(const std::vector<int> &axes, int64_t splitDim,
                int64_t concatDim, const TensorRef *t);
  void allSlice(const std::vector<int> &axes, int64_t dim, const TensorRef *t);
  void axisIndex(const std::vector<int> &axes, const TensorRef &result);

  /// Waits for the communication stream (errors are fatal).
  void synchronize();

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
};

} // namespace parcrt::cuda

#endif // PARCRT_CUDA_NCCLCOMMUNICATOR_H
