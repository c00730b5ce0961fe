//===- blas-gemm-chain.cpp - the peer of bench/gemm-chain.mlir ------------===//
//
// The same five GEMMs called directly on OpenBLAS, timed over `steps`
// repetitions after one warm-up: the harness parc's executable is measured
// against.
//
//   blas-gemm-chain STEPS
//
//===----------------------------------------------------------------------===//

#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 5;
  const int batch = 512, hidden = 4096;
  std::vector<float> x(batch * hidden, 0.5f), dy(batch * hidden, 0.25f),
      w1(hidden * hidden, 0.01f), w2(hidden * hidden, 0.02f),
      y1(batch * hidden), y2(batch * hidden), dy1(batch * hidden),
      dw1(hidden * hidden), dw2(hidden * hidden);
  auto step = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, hidden,
                hidden, 1, x.data(), hidden, w1.data(), hidden, 0, y1.data(),
                hidden);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, hidden,
                hidden, 1, y1.data(), hidden, w2.data(), hidden, 0, y2.data(),
                hidden);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hidden, hidden, batch,
                1, y1.data(), hidden, dy.data(), hidden, 0, dw2.data(),
                hidden);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, hidden, hidden,
                1, dy.data(), hidden, w2.data(), hidden, 0, dy1.data(),
                hidden);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hidden, hidden, batch,
                1, x.data(), hidden, dy1.data(), hidden, 0, dw1.data(),
                hidden);
  };
  step();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i)
    step();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf("blas: %.4f s per step (%d steps)\n", seconds / steps, steps);
  return 0;
}
