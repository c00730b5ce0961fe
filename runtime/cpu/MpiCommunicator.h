//===- MpiCommunicator.h - cpu communication over MPI -----------*- C++ -*-===//
//
// Collectives: one MPI communicator per distinct group of mesh axes,
// created on first use with MPI_Comm_create_group (collective over the
// group's members only, so ranks of other groups or pipeline stages need not
// take part) and ordered by index in group: communicator rank ==
// MeshInfo::indexInGroup. Results equal the reference evaluator's lock-step
// collectives.
//
// Point-to-point: on a duplicate of MPI_COMM_WORLD made at construction, so
// that channels (MPI tags) never meet the messages MPI_Comm_create_group
// exchanges on MPI_COMM_WORLD. A send copies the tensor into a staging
// buffer and MPI_Isends from it; synchronize() and the destructor complete
// the pending sends.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_MPICOMMUNICATOR_H
#define PARCRT_CPU_MPICOMMUNICATOR_H

#include "parcrt/Backend.h"

#include <mpi.h>

#include <map>
#include <vector>

namespace parcrt::cpu {

class MpiCommunicator final : public Communicator {
public:
  /// `mesh` must outlive this. Where MPI is initialized, construction is
  /// collective over MPI_COMM_WORLD (every rank creates its backend);
  /// without MPI (unit tests) only one-rank collectives work.
  explicit MpiCommunicator(const MeshInfo &mesh);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator &) = delete;
  MpiCommunicator &operator=(const MpiCommunicator &) = delete;

  /// Sum or max over the group (f32, i32, i64).
  void allReduce(const std::vector<int> &axes, bool max,
                 const TensorRef *t) override;
  /// Any dtype.
  void allGather(const std::vector<int> &axes, int64_t dim,
                 const TensorRef *t) override;
  /// f32, i32, i64: the chunks are packed contiguously and reduced with
  /// MPI_Reduce_scatter_block.
  void reduceScatter(const std::vector<int> &axes, int64_t dim,
                     const TensorRef *t) override;
  /// Any dtype.
  void allToAll(const std::vector<int> &axes, int64_t splitDim,
                int64_t concatDim, const TensorRef *t) override;

  void send(int peer, int64_t channel, const TensorRef &t) override;
  void recv(int peer, int64_t channel, const TensorRef &t) override;
  void synchronize(Watchdog *watchdog) override;

private:
  MPI_Comm communicator(const std::vector<int> &axes);
  /// `channel` as an MPI tag; fatal() outside [0, MPI_TAG_UB].
  int tag(int64_t channel) const;

  struct PendingSend {
    int peer;
    int64_t channel;
    std::vector<uint8_t> staging;
    MPI_Request request;
  };

  const MeshInfo &mesh;
  std::map<std::vector<int>, MPI_Comm> communicators;
  MPI_Comm pointToPoint = MPI_COMM_NULL;
  int tagUpperBound = 32767; // the least MPI_TAG_UB the standard allows
  std::vector<PendingSend> pending;
};

} // namespace parcrt::cpu

#endif // PARCRT_CPU_MPICOMMUNICATOR_H
