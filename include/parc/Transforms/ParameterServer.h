//===- ParameterServer.h - dedicated parameter servers ----------*- C++ -*-===//
//
// A plan with dedicated parameter servers gives the mesh a first axis `ps`
// of size 2 (workers, servers) and marks the train step
// `dist.parameter_server` (kParameterServerAttrName, ModelConvention.h);
// --parc-parameter-server cuts the partitioned step into the workers' and
// the servers' stage functions.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_PARAMETERSERVER_H
#define PARC_TRANSFORMS_PARAMETERSERVER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::parc {

/// The mesh axis --parc-apply-plan adds for dedicated parameter servers
/// (major to all others): coordinate 0 runs the workers, 1 the servers.
constexpr llvm::StringLiteral kServerAxis = "ps";

/// Whether `stage` is the dedicated parameter servers' function: its ranks
/// are not among the devices a plan fills, so a plan's per-device figures
/// are the workers'.
bool isDedicatedServers(func::FuncOp stage);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_PARAMETERSERVER_H
