//===- MpiCollectives.h - the cpu backend's collectives over MPI -*- C++
//-*-===//
//
// One MPI communicator per distinct group of mesh axes, created on first use
// with MPI_Comm_create_group (collective over the group's members only, so
// ranks of other groups or pipeline stages need not take part) and ordered
// by index in group: communicator rank == MeshInfo::indexInGroup. Results
// equal the reference evaluator's lock-step collectives.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CPU_MPICOLLECTIVES_H
#define PARCRT_CPU_MPICOLLECTIVES_H

#include "parcrt/Backend.h"

#include <mpi.h>

#include <map>
#include <vector>

namespace parcrt::cpu {

class MpiCollectives {
public:
  /// `mesh` must outlive this; MPI must be initialized.
  explicit MpiCollectives(const MeshInfo &mesh) : mesh(mesh) {}
  ~MpiCollectives();
  MpiCollectives(const MpiCollectives &) = delete;
  MpiCollectives &operator=(const MpiCollectives &) = delete;

  /// Sum or max over the group (f32, i32, i64).
  void allReduce(const std::vector<int> &axes, bool max, const TensorRef *t);
  /// The group's tensors joined along `dim` in group order (any dtype).
  void allGather(const std::vector<int> &axes, int64_t dim, const TensorRef *t);
  /// Chunk `indexInGroup` along `dim` of the group's sum: the chunks are
  /// packed contiguously and reduced with MPI_Reduce_scatter_block.
  void reduceScatter(const std::vector<int> &axes, int64_t dim,
                     const TensorRef *t);
  /// Member q receives chunk q (along `splitDim`) of every member, joined
  /// along `concatDim` in group order (any dtype).
  void allToAll(const std::vector<int> &axes, int64_t splitDim,
                int64_t concatDim, const TensorRef *t);

private:
  MPI_Comm communicator(const std::vector<int> &axes);

  const MeshInfo &mesh;
  std::map<std::vector<int>, MPI_Comm> communicators;
};

} // namespace parcrt::cpu

#endif // PARCRT_CPU_MPICOLLECTIVES_H
