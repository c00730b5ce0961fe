//===- LocalSgd.h - one replica per data-parallel rank ----------*- C++ -*-===//
//
// Local SGD (parameter averaging): each coordinate of a mesh axis trains its
// own replica of the model, a train step written at one replica's batch, on
// its block of the batch, and every `syncEvery` steps the replicas'
// parameters and buffers (and optionally their optimizer state) are
// averaged. --parc-apply-plan marks the train step with `dist.local_sgd`;
// after partitioning, --parc-local-sgd gives each replica its block of the
// data; the executables average between steps.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_LOCALSGD_H
#define PARC_TRANSFORMS_LOCALSGD_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::parc {

constexpr StringLiteral kLocalSgdAttrName = "dist.local_sgd";

struct LocalSgdConfig {
  /// The mesh axis whose coordinates are the replicas.
  std::string axis;
  int64_t syncEvery = 1;
  bool averageOptimizerState = false;
};

/// Local SGD's averaging of the replicas, which the executables run every
/// `syncEvery` steps: one all_reduce over `axis` per averaged tensor (the
/// float parameters and buffers, and the optimizer state when asked).
struct LocalSgdAveraging {
  std::string axis;
  int64_t replicas = 1, syncEvery = 1, tensors = 0, bytes = 0;
  /// Bytes one rank sends per averaging (ring all_reduce: 2(n-1)/n).
  double getTrafficBytes() const;
  /// "local SGD averaging over 'dp' (2 replicas) every 4 steps: ...".
  void print(llvm::raw_ostream &os) const;
};
/// The averaging of the partitioned `func`; nullopt when it is not a local
/// SGD step. Fails with a diagnostic on a malformed marking.
FailureOr<std::optional<LocalSgdAveraging>>
getLocalSgdAveraging(func::FuncOp func);

/// `{axis = "dp", sync_every = 2, average_optimizer_state = false}`.
DictionaryAttr getLocalSgdAttr(MLIRContext *context,
                               const LocalSgdConfig &config);
/// The configuration `func` carries, or nullopt when it has none. Fails
/// with a diagnostic on a malformed attribute.
FailureOr<std::optional<LocalSgdConfig>> getLocalSgd(func::FuncOp func);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_LOCALSGD_H
