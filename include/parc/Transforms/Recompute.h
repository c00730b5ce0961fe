//===- Recompute.h - activation recomputation of layers ---------*- C++ -*-===//
//
// Activation recomputation (Chen et al. 2016; Korthikanti et al. 2022): of a
// layer's forward values, a train step keeps only those that cross the
// layer's boundary (its input, its output; "full"), or also those its
// parameterized ops make ("selective"); the backward pass recomputes every
// other one it reads, right before the first backward op that needs one. The
// same ops run on the same values, so the results do not change; the memory
// plan then frees the layer's inner values after their forward use.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_RECOMPUTE_H
#define PARC_TRANSFORMS_RECOMPUTE_H

#include "parc/IR/ModelConvention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <set>

namespace mlir::parc {

/// The layer of each forward op of `func`: the highest layer whose
/// parameters (`h.<i>.…`) it reads; for an op that reads no layer's
/// parameters, none if it reads another parameter (embeddings, the final
/// norm, the head), else the highest layer of its operands (the residual
/// adds and activations between a layer's parameterized ops).
llvm::DenseMap<Operation *, int64_t> getForwardLayers(func::FuncOp func);

/// What the backward pass keeps of a recomputed layer.
enum class RecomputeGranularity {
  /// The layer's input and output only.
  Full,
  /// Also what the layer's parameterized ops (matmuls, norms) make; the
  /// parameter-free ops between them (attention cores, activations,
  /// residual adds, layout changes) run again.
  Selective,
};

/// Recomputes `layers` of the train step `func` in its backward pass. Fails
/// with a diagnostic from `emitError` when `func` has no backward pass, when
/// `layers` is empty or names a layer the model does not have. The forward
/// ops it runs again are appended to `recomputed` when given.
LogicalResult
recomputeLayers(func::FuncOp func, const std::set<int64_t> &layers,
                RecomputeGranularity granularity,
                llvm::function_ref<InFlightDiagnostic()> emitError,
                SmallVectorImpl<Operation *> *recomputed = nullptr);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_RECOMPUTE_H
