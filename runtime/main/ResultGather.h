//===- ResultGather.h - a program's results on rank 0 -----------*- C++ -*-===//
//
// Rank 0 prints and writes every result of the job. An SPMD program is one
// stage over the whole mesh; the executables of a pipeline (MPMD) each hold
// their own results. Within a stage the ranks' blocks are gathered to the
// stage's first rank and assembled there; the stages' first ranks then send
// their assembled results, serialized, to rank 0 (stage 0's first rank).
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_RESULTGATHER_H
#define PARCRT_MAIN_RESULTGATHER_H

#include "main/Program.h"
#include "parcrt/Backend.h"

#include <mpi.h>

namespace parcrt {

/// A result as rank 0 prints and writes it: the global tensor.
struct GatheredResult {
  std::string name;
  parcrt_dtype dtype = PARCRT_F32;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

class ResultGather {
public:
  /// Collective over MPI_COMM_WORLD: creates the communicators of this
  /// rank's stage and of the stages' first ranks. `program` must be this
  /// rank's stage's (Main checked the coordinate) and outlive the gather.
  ResultGather(const Program &program, const MeshInfo &mesh);
  ~ResultGather();
  ResultGather(const ResultGather &) = delete;
  ResultGather &operator=(const ResultGather &) = delete;

  /// Collective over MPI_COMM_WORLD, each stage passing its own `results`
  /// (indices into its Program::results): returns on rank 0 the global
  /// tensors of every stage's results, stage 0's first, leaving out a name
  /// that a lower stage returned (its value is the same: a tied weight, the
  /// step counter); other ranks get nothing. Blocks are assembled as
  /// assembleFromRanks does.
  std::vector<GatheredResult> gather(const std::vector<size_t> &results,
                                     Backend &backend,
                                     const uint8_t *arena) const;

private:
  const Program &program;
  /// The stage's ranks as a mesh of their own: the whole mesh with the stage
  /// axis cut to size 1, so that rank r of `stageComm` is its rank r.
  MeshInfo stageMesh;
  MPI_Comm stageComm = MPI_COMM_NULL;
  /// The stages' first ranks in stage order; null on the other ranks.
  MPI_Comm leaderComm = MPI_COMM_NULL;
};

} // namespace parcrt

#endif // PARCRT_MAIN_RESULTGATHER_H
