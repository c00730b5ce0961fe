//===- Parallel.cpp - the cpu kernels' threads ----------------------------===//

#include "cpu/Parallel.h"

#include <omp.h>

using namespace parcrt;

static int kernelThreads = 1;

void cpu::setThreads(int threads) {
  kernelThreads = std::max(threads, 1);
  omp_set_num_threads(kernelThreads);
}

int cpu::threads() { return kernelThreads; }
