//===- ResultGather.cpp - a program's results on rank 0 -------------------===//

#include "main/ResultGather.h"

#include "main/ShardLayout.h"
#include "parcrt/Values.h"

#include <mpi.h>

using namespace parcrt;

std::vector<double> parcrt::gatherResult(const BoundaryTensor &result,
                                         const MeshInfo &mesh, Backend &backend,
                                         const uint8_t *arena) {
  int bytes =
      static_cast<int>(result.localElements() * dtypeBytes(result.dtype));
  std::vector<uint8_t> local(bytes);
  backend.fromArena(local.data(), arena + result.offset, bytes);
  int numRanks = static_cast<int>(mesh.numRanks());
  std::vector<uint8_t> all(mesh.rank == 0 ? bytes * numRanks : 0);
  MPI_Gather(local.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, 0,
             MPI_COMM_WORLD);
  if (mesh.rank != 0)
    return {};
  std::vector<std::vector<double>> parts;
  for (int rank = 0; rank < numRanks; ++rank)
    parts.push_back(decodeValues(all.data() + static_cast<size_t>(rank) * bytes,
                                 result.dtype, result.localElements()));
  return assembleFromRanks(parts, result, mesh);
}
