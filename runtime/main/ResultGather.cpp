//===- ResultGather.cpp - a program's results on rank 0 -------------------===//

#include "main/ResultGather.h"

#include "main/ShardLayout.h"
#include "parcrt/Values.h"

#include <cstring>
#include <set>

using namespace parcrt;

namespace {
// The stage leaders' message to rank 0: per result its name (length, bytes),
// dtype, rank, shape and global values in double (as assembled, so rank 0
// prints and writes exactly what the leader computed).
void append(std::vector<uint8_t> &bytes, const void *data, size_t size) {
  const auto *first = static_cast<const uint8_t *>(data);
  bytes.insert(bytes.end(), first, first + size);
}

template <typename T> void append(std::vector<uint8_t> &bytes, T value) {
  append(bytes, &value, sizeof(T));
}

void serialize(const GatheredResult &result, std::vector<uint8_t> &bytes) {
  append<uint64_t>(bytes, result.name.size());
  append(bytes, result.name.data(), result.name.size());
  append<int32_t>(bytes, result.dtype);
  append<uint64_t>(bytes, result.shape.size());
  append(bytes, result.shape.data(), result.shape.size() * sizeof(int64_t));
  append(bytes, result.values.data(), result.values.size() * sizeof(double));
}

class Deserializer {
public:
  explicit Deserializer(const std::vector<uint8_t> &bytes)
      : data(bytes.data()), end(bytes.data() + bytes.size()) {}

  bool done() const { return data == end; }

  GatheredResult result() {
    GatheredResult result;
    result.name.resize(read<uint64_t>());
    read(result.name.data(), result.name.size());
    result.dtype = static_cast<parcrt_dtype>(read<int32_t>());
    result.shape.resize(read<uint64_t>());
    read(result.shape.data(), result.shape.size() * sizeof(int64_t));
    int64_t elements = 1;
    for (int64_t size : result.shape)
      elements *= size;
    result.values.resize(elements);
    read(result.values.data(), result.values.size() * sizeof(double));
    return result;
  }

private:
  void read(void *out, size_t size) {
    std::memcpy(out, data, size);
    data += size;
  }

  template <typename T> T read() {
    T value;
    read(&value, sizeof(T));
    return value;
  }

  const uint8_t *data, *end;
};
} // namespace

ResultGather::ResultGather(const Program &program, const MeshInfo &mesh)
    : program(program), stageMesh(mesh) {
  int stage = program.stage ? static_cast<int>(program.stage->index) : 0;
  if (program.stage)
    stageMesh.axisSizes[program.stage->axis] = 1;
  stageMesh.stages = {};
  // Keyed by world rank: the stage's ranks keep their order, which is their
  // order in stageMesh, and the leaders' order is the stages'.
  MPI_Comm_split(MPI_COMM_WORLD, stage, mesh.rank, &stageComm);
  MPI_Comm_rank(stageComm, &stageMesh.rank);
  MPI_Comm_split(MPI_COMM_WORLD, stageMesh.rank == 0 ? 0 : MPI_UNDEFINED,
                 mesh.rank, &leaderComm);
}

ResultGather::~ResultGather() {
  if (leaderComm != MPI_COMM_NULL)
    MPI_Comm_free(&leaderComm);
  MPI_Comm_free(&stageComm);
}

std::vector<GatheredResult>
ResultGather::gather(const std::vector<size_t> &results, Backend &backend,
                     const uint8_t *arena) const {
  int numRanks = static_cast<int>(stageMesh.numRanks());
  bool leader = stageMesh.rank == 0;
  std::vector<GatheredResult> gathered;
  for (size_t index : results) {
    const BoundaryTensor &result = program.results[index];
    int bytes =
        static_cast<int>(result.localElements() * dtypeBytes(result.dtype));
    std::vector<uint8_t> local(bytes);
    backend.fromArena(local.data(), arena + result.offset, bytes);
    std::vector<uint8_t> all(leader ? bytes * numRanks : 0);
    MPI_Gather(local.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, 0,
               stageComm);
    if (!leader)
      continue;
    std::vector<std::vector<double>> parts;
    for (int rank = 0; rank < numRanks; ++rank)
      parts.push_back(
          decodeValues(all.data() + static_cast<size_t>(rank) * bytes,
                       result.dtype, result.localElements()));
    gathered.push_back({result.name, result.dtype, result.globalShape,
                        assembleFromRanks(parts, result, stageMesh)});
  }
  if (!leader)
    return {};

  int leaderRank = 0, leaders = 1;
  MPI_Comm_rank(leaderComm, &leaderRank);
  MPI_Comm_size(leaderComm, &leaders);
  if (leaders == 1)
    return gathered;
  // Rank 0 keeps its own results; the other leaders send theirs.
  std::vector<uint8_t> message;
  if (leaderRank != 0)
    for (const GatheredResult &result : gathered)
      serialize(result, message);
  int size = static_cast<int>(message.size());
  std::vector<int> sizes(leaderRank == 0 ? leaders : 0),
      displacements(sizes.size());
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, leaderComm);
  size_t total = 0;
  for (size_t stage = 0; stage < sizes.size(); ++stage) {
    displacements[stage] = static_cast<int>(total);
    total += sizes[stage];
  }
  std::vector<uint8_t> received(total);
  MPI_Gatherv(message.data(), size, MPI_BYTE, received.data(), sizes.data(),
              displacements.data(), MPI_BYTE, 0, leaderComm);
  if (leaderRank != 0)
    return {};

  std::set<std::string> names;
  for (const GatheredResult &result : gathered)
    names.insert(result.name);
  Deserializer reader(received);
  while (!reader.done()) {
    GatheredResult result = reader.result();
    if (names.insert(result.name).second)
      gathered.push_back(std::move(result));
  }
  return gathered;
}
