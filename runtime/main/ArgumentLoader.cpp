//===- ArgumentLoader.cpp - a rank's slice of each argument ---------------===//

#include "main/ArgumentLoader.h"

#include "main/ShardLayout.h"

#include <cmath>

using namespace parcrt;

static std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

static const char *roleName(ArgumentRole role) {
  switch (role) {
  case ArgumentRole::Input:
    return "input";
  case ArgumentRole::Param:
    return "param";
  case ArgumentRole::Label:
    return "label";
  case ArgumentRole::OptState:
    return "optstate";
  case ArgumentRole::Buffer:
    return "buffer";
  case ArgumentRole::Carry:
    return "carry";
  }
  return "argument";
}

static bool isInteger(parcrt_dtype dtype) {
  return dtype == PARCRT_I32 || dtype == PARCRT_I64;
}

bool parcrt::argumentValues(const ProgramArgument &argument,
                            const MeshInfo &mesh, const TensorFile *file,
                            uint64_t seed, std::vector<double> &values,
                            std::string *error) {
  std::vector<int64_t> indices = globalIndices(argument, mesh);
  values.assign(indices.size(), 0.0);
  // A copy (an f32 master) starts as its source: its own entry when the
  // file holds one (a checkpoint), else the source's entry or stream.
  const std::string &source =
      argument.initFrom.empty() ? argument.name : argument.initFrom;
  const TensorInfo *info = file ? file->reader->find(argument.name) : nullptr;
  if (file && !info && !argument.initFrom.empty())
    info = file->reader->find(source);
  // A file given for this argument's kind must hold it: a checkpoint that
  // lacks a weight is broken, not a request for random values.
  if (file && !info) {
    *error = "tensor '" + argument.name + "' (" + roleName(argument.role) +
             ") is missing from " + file->path;
    return false;
  }
  if (!info) {
    bool integer = isInteger(argument.dtype);
    if (integer && !argument.init) {
      *error = "argument '" + argument.name +
               "' holds integers but has no init to draw them from; give its "
               "values in a tensor file (--inputs)";
      return false;
    }
    InitSpec spec = argument.getStartingInit();
    uint64_t key = tensorKey(seed, source);
    // Counter-based: an element's value depends on its global index alone,
    // so the kernel threads may draw them in any order.
    int64_t count = static_cast<int64_t>(indices.size());
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; ++i)
      values[i] = initValue(spec, key, indices[i], integer);
    return true;
  }
  // A checkpoint-shaped tensor holds the same row-major elements.
  if (info->shape != argument.globalShape &&
      info->shape != argument.checkpointShape) {
    *error = "tensor '" + argument.name + "' in " + file->path + " has shape " +
             shapeString(info->shape) + " but the program's " +
             roleName(argument.role) + " argument has shape " +
             shapeString(argument.globalShape);
    return false;
  }
  std::vector<double> full(info->numElements());
  file->reader->readAsDouble(*info, full.data());
  for (size_t i = 0; i < indices.size(); ++i) {
    values[i] = full[indices[i]];
    if (isInteger(argument.dtype) && values[i] != std::floor(values[i])) {
      *error = "tensor '" + argument.name + "' in " + file->path +
               " holds non-integer values but the program's argument holds "
               "integers";
      return false;
    }
  }
  return true;
}
