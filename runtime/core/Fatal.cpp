//===- Fatal.cpp - ending the whole job on an error -----------------------===//

#include "core/Fatal.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

[[noreturn]] void parcrt::fatal(const std::string &message) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  bool running = initialized && !finalized;
  int rank = 0;
  if (running)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (running)
    std::fprintf(stderr, "parc: rank %d: %s\n", rank, message.c_str());
  else
    std::fprintf(stderr, "parc: %s\n", message.c_str());
  std::fflush(stderr);
  if (running)
    MPI_Abort(MPI_COMM_WORLD, 1);
  // Not std::exit: the watchdog calls this from its own thread.
  std::_Exit(1);
}
