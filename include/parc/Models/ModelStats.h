//===- ModelStats.h - size and cost of a model, read from its IR -*- C++ -*-===//

#ifndef PARC_MODELS_MODELSTATS_H
#define PARC_MODELS_MODELSTATS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace mlir::parc {

struct ModelStats {
  /// Elements and bytes of the `param` arguments.
  int64_t parameters = 0;
  int64_t parameterBytes = 0;
  /// Sum of FlopCountOpInterface over the ops of the function.
  int64_t forwardFlops = 0;
  /// Ops by name, including ones without a FLOP count.
  std::map<std::string, int64_t> opCounts;

  /// The usual estimate of a training step: backward costs twice forward.
  int64_t getTrainingFlops() const { return 3 * forwardFlops; }
};

ModelStats computeModelStats(func::FuncOp func);

void printModelStats(const ModelStats &stats, llvm::raw_ostream &os);

} // namespace mlir::parc

#endif // PARC_MODELS_MODELSTATS_H
