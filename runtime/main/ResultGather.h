//===- ResultGather.h - a program's results on rank 0 -----------*- C++ -*-===//

#ifndef PARCRT_MAIN_RESULTGATHER_H
#define PARCRT_MAIN_RESULTGATHER_H

#include "main/Program.h"
#include "parcrt/Backend.h"

namespace parcrt {

/// Collective over MPI_COMM_WORLD: gathers every rank's local part of
/// `result` from the arena and returns, on rank 0, the global tensor
/// (assembleFromRanks); other ranks get an empty vector.
std::vector<double> gatherResult(const BoundaryTensor &result,
                                 const MeshInfo &mesh, Backend &backend,
                                 const uint8_t *arena);

} // namespace parcrt

#endif // PARCRT_MAIN_RESULTGATHER_H
