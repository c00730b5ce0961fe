//===- MixedPrecision.h - a model's activations in bf16 ---------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_MIXEDPRECISION_H
#define PARC_TRANSFORMS_MIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::parc {

/// The function attribute that records a model's or train step's precision
/// ("bf16-mixed", "f16-mixed"); absent for f32.
constexpr llvm::StringLiteral kPrecisionAttrName = "parc.precision";

/// Rewrites the f32 computation of the model `func` (before autodiff) to
/// store activations as `lowType` (bf16 or f16): f32 arguments stay f32 and
/// each use by a low-precision op reads a cast of its own; ops marked
/// KeepsFullPrecision (the loss), and every op that reads one's result, run
/// on f32 operands; the function's results are cast back to f32. With
/// `lowPrecisionParameters`, the f32 parameters are stored as `lowType`
/// themselves (a train step's, whose f32 master copies the optimizer
/// holds), so autodiff gives `lowType` gradients; else autodiff gives f32
/// gradients of the f32 parameters through the casts. Marks `func` with
/// kPrecisionAttrName; a function marked already is a located error.
LogicalResult applyMixedPrecision(func::FuncOp func, FloatType lowType,
                                  bool lowPrecisionParameters = false);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_MIXEDPRECISION_H
