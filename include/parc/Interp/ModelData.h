//===- ModelData.h - the tensors a model runs on ----------------*- C++ -*-===//
//
// Arguments of a model come from safetensors files by `parc.name`, or from
// the deterministic initialization of docs/initialization.md.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_INTERP_MODELDATA_H
#define PARC_INTERP_MODELDATA_H

#include "parc/IR/ModelConvention.h"
#include "parc/Interp/Tensor.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

namespace mlir::parc::interp {

/// The deterministic initial value of `argument` for `seed`. Fails when an
/// integer argument has no #parc.init (its range would be a guess).
llvm::Expected<Tensor> initializeArgument(const ModelArgument &argument,
                                          uint64_t seed);

/// Reads every tensor of a safetensors file, converted to double.
llvm::Expected<llvm::StringMap<Tensor>> readTensorFile(StringRef path);

/// Writes `tensors` under `names`, each stored as the element type given.
llvm::Error writeTensorFile(StringRef path, ArrayRef<std::string> names,
                            ArrayRef<Tensor> tensors,
                            ArrayRef<Type> elementTypes);

/// The arguments of a model: for each, the tensor named like it in `given`
/// (shape checked) or its deterministic initialization.
llvm::Expected<SmallVector<Tensor>>
prepareArguments(ArrayRef<ModelArgument> arguments,
                 const llvm::StringMap<Tensor> &given, uint64_t seed);

} // namespace mlir::parc::interp

#endif // PARC_INTERP_MODELDATA_H
