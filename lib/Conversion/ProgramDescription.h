//===- ProgramDescription.h - the JSON a rank program carries ---*- C++ -*-===//

#ifndef PARC_LIB_CONVERSION_PROGRAMDESCRIPTION_H
#define PARC_LIB_CONVERSION_PROGRAMDESCRIPTION_H

#include "dist/IR/DistOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mlir::parc {

/// The description of a memory-planned model function that the runtime's
/// main reads (docs/runtime.md): mesh, arena size, and every argument and
/// result with dtype, global and local shape, sharding, offset and
/// initialization. `mesh` is null for an unpartitioned function.
FailureOr<std::string> describeProgram(func::FuncOp func, dist::MeshOp mesh);

} // namespace mlir::parc

#endif // PARC_LIB_CONVERSION_PROGRAMDESCRIPTION_H
