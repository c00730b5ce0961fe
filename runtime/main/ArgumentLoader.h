//===- ArgumentLoader.h - a rank's slice of each argument -------*- C++ -*-===//
//
// Every rank reads its own block of the FULL tensors of a safetensors file,
// or computes it with the deterministic initialization at the block's
// global element indices, so any layout starts from the serial model's
// values.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_MAIN_ARGUMENTLOADER_H
#define PARCRT_MAIN_ARGUMENTLOADER_H

#include "main/Program.h"
#include "parcrt/Backend.h"
#include "parcrt/Safetensors.h"

#include <memory>

namespace parcrt {

/// A safetensors file named on the command line.
struct TensorFile {
  std::string path;
  std::unique_ptr<SafetensorsReader> reader;
};

/// `mesh.rank`'s local values of `argument`: from the tensor named like it in
/// `file` (null when none was given), whose shape must be the argument's
/// global shape or its checkpoint shape, else from the deterministic
/// initialization (the argument's init, or normal(0, 0.02) for params and
/// normal(0, 1) for inputs; integer arguments need an init). Returns false
/// with `error` naming the tensor and file.
bool argumentValues(const ProgramArgument &argument, const MeshInfo &mesh,
                    const TensorFile *file, uint64_t seed,
                    std::vector<double> &values, std::string *error);

} // namespace parcrt

#endif // PARCRT_MAIN_ARGUMENTLOADER_H
