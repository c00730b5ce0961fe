//===- StageMeshes.h - the ranks of stage functions -------------*- C++ -*-===//
//
// Stage functions (pipeline stages, a parameter server's workers and
// servers) usually share one mesh, whose numbering is the world's. Dedicated
// parameter servers fewer than the workers run on a mesh of their own, with
// the same axes but a smaller data-parallel one: the world's ranks are then
// the stages' slices one after another (parc::StagedMeshes), which the
// program description, parc-compile's manifest and the runtime share.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_STAGEMESHES_H
#define PARC_TRANSFORMS_STAGEMESHES_H

#include "parc/Support/MeshArithmetic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::parc {

/// The meshes of `stages` (in stage order, as getStageFunctions gives them)
/// when they differ; empty when they share one (or there are no stages).
/// Fails with a diagnostic when a stage names no mesh, or the meshes differ
/// in their axes or do not have the stage axis first.
FailureOr<::parc::StagedMeshes> getStagedMeshes(ArrayRef<func::FuncOp> stages);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_STAGEMESHES_H
