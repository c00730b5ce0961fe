//===- StaleWeights.h - PipeDream-2BW's two weight versions -----*- C++ -*-===//
//
// PipeDream-2BW (Narayanan et al., ICML'21) runs the next step's first
// micro-batches before the current step's update, so a step's gradient is
// computed on the weights of one step before:
//   W(t+1) = update(W(t), grad(W(t-1)))
// The train step carries both versions: each parameter the optimizer
// updates gets a stale version, a `carry` argument that the forward and
// backward ops read in its place, while the update reads and writes the
// newest; the newest is returned as the next step's stale version. The
// pipeline's prologue sets the stale version to the initial weights.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_STALEWEIGHTS_H
#define PARC_TRANSFORMS_STALEWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::parc {

/// On a stale version: the name of the parameter it is an older version of.
constexpr llvm::StringLiteral kStaleOfAttrName = "parc.stale_of";
/// A stale version is named after its parameter with this suffix.
constexpr llvm::StringLiteral kStaleSuffix = ".stale";

/// Adds the stale version of every parameter an optimizer update of `func`
/// writes (see above). Fails with a diagnostic when an updated parameter is
/// not an argument.
LogicalResult addStaleWeightVersions(func::FuncOp func);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_STALEWEIGHTS_H
