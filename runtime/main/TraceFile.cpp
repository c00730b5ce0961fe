//===- TraceFile.cpp - the job's --trace file, written by rank 0 ----------===//

#include "main/TraceFile.h"

#include <mpi.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace parcrt;

TraceFile::~TraceFile() {
  if (!file)
    return;
  std::fclose(file);
  std::remove(temporary.c_str());
}

bool TraceFile::create(const std::string &tracePath, int worldRank,
                       std::string *error) {
  path = tracePath;
  temporary = path + ".tmp";
  rank = worldRank;
  if (rank != 0)
    return true;
  file = std::fopen(temporary.c_str(), "w");
  if (!file)
    *error = "cannot write the trace " + path + ": cannot create " + temporary +
             ": " + std::strerror(errno);
  return file != nullptr;
}

bool TraceFile::write(const std::string &events, std::string *error) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // Every rank learns all sizes, so all agree when the total does not fit
  // MPI_Gatherv's int displacements.
  auto size = static_cast<int64_t>(events.size());
  std::vector<int64_t> sizes(ranks);
  MPI_Allgather(&size, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T,
                MPI_COMM_WORLD);
  int64_t total = 0;
  for (int64_t one : sizes)
    total += one;
  if (total > INT_MAX) {
    *error = "the trace of all ranks has " + std::to_string(total) +
             " bytes, more than one MPI message holds (2 GiB): trace fewer "
             "steps";
    return false;
  }

  std::vector<int> counts, displacements;
  std::vector<char> all;
  if (rank == 0) {
    for (int64_t one : sizes) {
      displacements.push_back(static_cast<int>(all.size()));
      counts.push_back(static_cast<int>(one));
      all.resize(all.size() + one);
    }
  }
  MPI_Gatherv(events.data(), static_cast<int>(size), MPI_CHAR, all.data(),
              counts.data(), displacements.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0)
    return true;

  std::fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", file);
  for (int from = 0; from < ranks; ++from) {
    if (from)
      std::fputs(",\n", file);
    std::fwrite(all.data() + displacements[from], 1, counts[from], file);
  }
  std::fputs("\n]}\n", file);
  bool written = !std::ferror(file);
  written = std::fclose(file) == 0 && written;
  file = nullptr;
  if (written && std::rename(temporary.c_str(), path.c_str()) == 0)
    return true;
  *error = "cannot write the trace " + path + ": " + std::strerror(errno);
  std::remove(temporary.c_str());
  return false;
}
