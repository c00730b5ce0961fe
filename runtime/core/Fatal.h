//===- Fatal.h - ending the whole job on an error ---------------*- C++ -*-===//
//
// A rank that cannot continue (a bad id in an embedding, a dtype a backend
// lacks, a collective that never completes) must not leave the other ranks
// waiting for it: it reports and aborts every rank of the job.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_CORE_FATAL_H
#define PARCRT_CORE_FATAL_H

#include <string>

namespace parcrt {

/// Prints "parc: rank R: <message>" to stderr and ends the job with exit code
/// 1: MPI_Abort where MPI is running, else exit(1) (unit tests).
[[noreturn]] void fatal(const std::string &message);

} // namespace parcrt

#endif // PARCRT_CORE_FATAL_H
