//===- ModelData.cpp - the tensors a model runs on ------------------------===//

#include "parc/Interp/ModelData.h"

#include "parcrt/Init.h"
#include "parcrt/Safetensors.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [index, size] : llvm::enumerate(shape))
    text += (index ? ", " : "") + std::to_string(size);
  return text + "]";
}

static parcrt::InitSpec defaultInit(const ModelArgument &argument) {
  if (argument.role == ArgumentRole::Param)
    return {parcrt::InitDistribution::Normal, 0.0, 0.02};
  return {parcrt::InitDistribution::Normal, 0.0, 1.0};
}

static parcrt::InitSpec toSpec(InitAttr init) {
  double first = init.getFirst().convertToDouble();
  double second = init.getSecond().convertToDouble();
  switch (init.getDistribution()) {
  case InitDistribution::Normal:
    return {parcrt::InitDistribution::Normal, first, second};
  case InitDistribution::Uniform:
    return {parcrt::InitDistribution::Uniform, first, second};
  case InitDistribution::Constant:
    return {parcrt::InitDistribution::Constant, first, second};
  }
  llvm_unreachable("unknown init distribution");
}

llvm::Expected<Tensor>
mlir::parc::interp::initializeArgument(const ModelArgument &argument,
                                       uint64_t seed) {
  bool integer = argument.type.getElementType().isInteger();
  if (integer && !argument.init)
    return llvm::createStringError(
        "argument '%s' holds integers but has no #parc.init<uniform(0, N)> "
        "to draw them from; give its values in a tensor file",
        argument.name.c_str());
  parcrt::InitSpec spec =
      argument.init ? toSpec(argument.init) : defaultInit(argument);
  Tensor tensor(argument.type.getShape());
  parcrt::initValues(spec, seed, argument.name, integer, 0,
                     tensor.values.size(), tensor.values.data());
  return tensor;
}

llvm::Expected<llvm::StringMap<Tensor>>
mlir::parc::interp::readTensorFile(StringRef path) {
  std::string error;
  std::unique_ptr<parcrt::SafetensorsReader> reader =
      parcrt::SafetensorsReader::open(path.str(), &error);
  if (!reader)
    return llvm::createStringError(error);
  llvm::StringMap<Tensor> tensors;
  for (const parcrt::TensorInfo &info : reader->tensors()) {
    Tensor tensor(info.shape);
    reader->readAsDouble(info, tensor.values.data());
    tensors[info.name] = std::move(tensor);
  }
  return tensors;
}

static std::optional<parcrt::DType> toDType(Type type) {
  if (type.isF32())
    return parcrt::DType::F32;
  if (type.isF64())
    return parcrt::DType::F64;
  if (type.isF16())
    return parcrt::DType::F16;
  if (type.isBF16())
    return parcrt::DType::BF16;
  if (type.isSignlessInteger(64))
    return parcrt::DType::I64;
  if (type.isSignlessInteger(32))
    return parcrt::DType::I32;
  return std::nullopt;
}

llvm::Error mlir::parc::interp::writeTensorFile(StringRef path,
                                                ArrayRef<std::string> names,
                                                ArrayRef<Tensor> tensors,
                                                ArrayRef<Type> elementTypes) {
  parcrt::SafetensorsWriter writer;
  for (auto [name, tensor, type] :
       llvm::zip_equal(names, tensors, elementTypes)) {
    std::optional<parcrt::DType> dtype = toDType(type);
    if (!dtype)
      return llvm::createStringError("tensor '%s' has an element type that "
                                     "safetensors files cannot hold",
                                     name.c_str());
    writer.add(name, *dtype,
               std::vector<int64_t>(tensor.shape.begin(), tensor.shape.end()),
               tensor.values.data());
  }
  std::string error;
  if (!writer.write(path.str(), &error))
    return llvm::createStringError(error);
  return llvm::Error::success();
}

llvm::Expected<SmallVector<Tensor>>
mlir::parc::interp::prepareArguments(ArrayRef<ModelArgument> arguments,
                                     const llvm::StringMap<Tensor> &given,
                                     uint64_t seed) {
  SmallVector<Tensor> tensors;
  llvm::StringMap<const ModelArgument *> byName;
  for (const ModelArgument &argument : arguments)
    byName[argument.name] = &argument;
  for (const ModelArgument &argument : arguments) {
    auto it = given.find(argument.name);
    if (it == given.end() && argument.initFrom)
      it = given.find(*argument.initFrom);
    if (it == given.end()) {
      // A copy starts as its source: its stream and init, its own type.
      const ModelArgument *start =
          argument.initFrom ? byName.lookup(*argument.initFrom) : &argument;
      if (!start)
        return llvm::createStringError(
            "argument '%s' starts from '%s', which is no argument",
            argument.name.c_str(), argument.initFrom->c_str());
      llvm::Expected<Tensor> tensor = initializeArgument(*start, seed);
      if (!tensor)
        return tensor.takeError();
      tensors.push_back(std::move(*tensor));
      continue;
    }
    ArrayRef<int64_t> fileShape = it->second.shape;
    bool asCheckpoint =
        argument.checkpointShape &&
        fileShape == ArrayRef<int64_t>(*argument.checkpointShape) &&
        static_cast<int64_t>(it->second.values.size()) ==
            argument.type.getNumElements();
    if (fileShape != argument.type.getShape() && !asCheckpoint)
      return llvm::createStringError(
          "tensor '%s' has shape %s in the file but the model's %s argument "
          "has shape %s",
          argument.name.c_str(), shapeString(it->second.shape).c_str(),
          stringifyArgumentRole(argument.role).str().c_str(),
          shapeString(argument.type.getShape()).c_str());
    if (argument.type.getElementType().isInteger() &&
        llvm::any_of(it->second.values,
                     [](double value) { return value != std::floor(value); }))
      return llvm::createStringError(
          "tensor '%s' holds non-integer values but the model's argument "
          "holds integers",
          argument.name.c_str());
    // A checkpoint-shaped tensor holds the same row-major elements.
    tensors.emplace_back(argument.type.getShape(), it->second.values);
  }
  return tensors;
}
