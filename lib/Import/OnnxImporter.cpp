//===- OnnxImporter.cpp - ONNX models to parc functions -------------------===//
//
// Loads the model with libonnx, runs its checker and shape inference (both
// throw: every call into them is wrapped), then walks the graph in
// topological order, mapping each node to parc ops. Shape-like operands
// (Reshape's shape, Slice's bounds, axes, split sizes, Trilu's k) must be
// known at import time: they are read from initializers and Constant nodes
// and never become values.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/OnnxImporter.h"

#include "Importer.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Support/InputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::onnx_import;

static constexpr int64_t kMinOpset = 13, kMaxOpset = 21;
// What Debian's libonnx 1.12 checks; parc checks newer models itself.
static constexpr int64_t kLibonnxOpset = 17, kLibonnxIrVersion = 8;
static constexpr int64_t kMaxIrVersion = 10;

// clang-format off
/// Where the SDPA decomposition's IsNaN may stand (see IsNaN below).
static constexpr StringLiteral kNanTestUse =
    "IsNaN imports only as the condition of Where(IsNaN(s), 0, s) over a "
    "Softmax s";

static const StringRef kSupportedOps[] = {
    "Add",        "And",             "AveragePool", "BatchNormalization",
    "Cast",       "Concat",          "Constant",    "Conv",
    "Div",        "Equal",           "Erf",         "Exp",
    "Expand",     "Flatten",         "Gather",      "GatherND",
    "Gelu",       "Gemm",            "GlobalAveragePool",
    "Greater",    "GreaterOrEqual",  "Identity",    "IsNaN",
    "LayerNormalization",            "Less",        "LessOrEqual",
    "Log",        "LogSoftmax",      "MatMul",      "MaxPool",
    "Mul",        "Neg",             "Not",         "Or",
    "Pow",        "Reciprocal",      "ReduceLogSumExp",
    "ReduceMax",  "ReduceMean",      "ReduceSum",   "Relu",
    "Reshape",    "Sigmoid",         "Slice",       "Softmax",
    "SoftmaxCrossEntropyLoss",       "Split",       "Sqrt",
    "Squeeze",    "Sub",             "Tanh",        "Transpose",
    "Trilu",      "Unsqueeze",       "Where",       "Xor"};
// clang-format on

ArrayRef<StringRef> mlir::parc::getSupportedOnnxOps() { return kSupportedOps; }

FailureOr<OnnxInputShape> mlir::parc::parseOnnxInputShape(StringRef spec,
                                                          std::string &error) {
  size_t equals = spec.rfind('=');
  if (equals == StringRef::npos || equals == 0) {
    error = "--input-shape expects name=d0,d1,..., got '" + spec.str() + "'";
    return failure();
  }
  OnnxInputShape result;
  result.name = spec.take_front(equals).str();
  StringRef dims = spec.drop_front(equals + 1);
  if (dims.empty())
    return result; // a scalar
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef part : parts) {
    int64_t dim;
    if (part.trim().getAsInteger(10, dim) || dim <= 0) {
      error = "--input-shape '" + spec.str() +
              "': dimensions must be positive integers";
      return failure();
    }
    result.shape.push_back(dim);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

LogicalResult Importer::load() {
  // Protobuf parses at most 2^31 - 1 bytes.
  auto buffer = readInputFile(path, "the ONNX model",
                                      std::numeric_limits<int>::max(),
                                      /*isText=*/false);
  if (!buffer)
    return emitError(fileLoc) << llvm::toString(buffer.takeError());
  StringRef bytes = (*buffer)->getBuffer();
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return emitError(fileLoc)
           << "'" << path
           << "' is not an ONNX model (it does not parse as a ModelProto; "
              "truncated or another format?)";
  if (!model.has_graph() || model.ir_version() <= 0)
    return emitError(fileLoc) << "'" << path
                              << "' is not an ONNX model (no graph or IR "
                                 "version)";
  for (const onnx::OperatorSetIdProto &import : model.opset_import())
    if (import.domain().empty() || import.domain() == "ai.onnx")
      opset = import.version();
  // libonnx 1.12 knows IR versions up to 8 and opsets up to 17: newer
  // models (the dynamo exporter writes IR 10, opset 18) are checked by
  // parc's own rules instead of its checker and shape inference.
  bool newerThanLibonnx =
      model.ir_version() > kLibonnxIrVersion || opset > kLibonnxOpset;
  if (newerThanLibonnx) {
    if (model.ir_version() > kMaxIrVersion)
      return emitError(fileLoc)
             << "'" << path << "' has IR version " << model.ir_version()
             << "; parc-translate reads IR versions up to " << kMaxIrVersion;
  } else {
    // The checker finds external data next to the model only when it
    // reads the model from its path.
    bool external = llvm::any_of(
        model.graph().initializer(), [](const onnx::TensorProto &tensor) {
          return tensor.data_location() == onnx::TensorProto::EXTERNAL;
        });
    try {
      if (external)
        onnx::checker::check_model(path.str());
      else
        onnx::checker::check_model(model);
    } catch (const std::exception &error) {
      return emitError(fileLoc)
             << "the ONNX checker rejects '" << path << "': " << error.what();
    } catch (...) {
      return emitError(fileLoc) << "the ONNX checker rejects '" << path << "'";
    }
  }
  // libonnx 1.12's checker leaves some of this to its users (a graph output
  // nothing computes crashes its version converter; found by
  // scripts/fuzz.sh), and cannot check newer models at all.
  if (failed(checkGraph()))
    return failure();
  // Older opsets are upgraded to the oldest parc reads, by libonnx's own
  // version converter.
  if (opset >= 1 && opset < kMinOpset) {
    try {
      model = onnx::version_conversion::ConvertVersion(model, kMinOpset);
    } catch (const std::exception &error) {
      return emitError(fileLoc)
             << "'" << path << "' uses opset " << opset
             << " of the default ONNX domain, which libonnx's version "
                "converter cannot upgrade to "
             << kMinOpset << ": " << error.what();
    } catch (...) {
      return emitError(fileLoc)
             << "'" << path << "' uses opset " << opset
             << ", which libonnx's version converter cannot upgrade to "
             << kMinOpset;
    }
    opset = kMinOpset;
  }
  if (opset < kMinOpset || opset > kMaxOpset)
    return emitError(fileLoc)
           << "'" << path << "' uses opset " << opset
           << " of the default ONNX domain; parc-translate supports opsets "
           << kMinOpset << " to " << kMaxOpset
           << " (older ones are upgraded on import)";
  // Ops parc does not convert are refused before libonnx's shape inference
  // runs on them, and the windows of those it does are checked: libonnx
  // 1.12 reads out of bounds on some malformed nodes (a Conv whose input
  // has fewer dimensions than its kernel; found by scripts/fuzz.sh).
  for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node())
    if (failed(checkOpSupported(node)) ||
        failed(prepareWindowForInference(node)))
      return failure();
  if (newerThanLibonnx)
    return success();
  try {
    // Strict: a node whose shapes do not fit is an error here, before parc's
    // own shape rules would meet it while building ops.
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type_val=*/true,
                                    /*strict_mode_val=*/1));
  } catch (const std::exception &error) {
    return emitError(fileLoc) << "ONNX shape inference fails on '" << path
                              << "': " << error.what();
  } catch (...) {
    return emitError(fileLoc) << "ONNX shape inference fails on '" << path
                              << "'";
  }
  return success();
}

// What libonnx's checker would say of a graph, checked for every model since
// that checker cannot check newer ones and leaves some of it to its users:
// every value is defined once, before it is read; graph inputs and outputs
// are tensors; nodes name an op. The ops' own rules are parc's, as it
// converts them.
LogicalResult Importer::checkGraph() {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringSet<> defined;
  auto define = [&](const std::string &name, const Twine &what) {
    if (name.empty())
      return LogicalResult(emitError(fileLoc) << what << " has no name");
    if (!defined.insert(name).second)
      return LogicalResult(emitError(fileLoc) << what << " defines '" << name
                                              << "', which is defined before");
    return success();
  };
  for (const onnx::TensorProto &tensor : graph.initializer())
    if (failed(define(tensor.name(), "an initializer")))
      return failure();
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (!input.type().has_tensor_type())
      return emitError(fileLoc) << "unsupported: graph input '"
                                << input.name() << "' is not a tensor";
    // An initializer may also be listed as an input (IR < 4 requires it).
    if (!defined.contains(input.name()) &&
        failed(define(input.name(), "a graph input")))
      return failure();
  }
  for (const onnx::NodeProto &node : graph.node()) {
    if (node.op_type().empty())
      return nodeError(node) << "names no op";
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.contains(input))
        return nodeError(node) << "reads '" << input
                               << "', which no graph input, initializer or "
                                  "earlier node defines";
    for (const std::string &output : node.output())
      if (!output.empty() &&
          failed(define(output, "node '" + node.name() + "'")))
        return failure();
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (!defined.contains(output.name()))
      return emitError(fileLoc)
             << "graph output '" << output.name() << "' is not computed";
    if (!output.type().has_tensor_type())
      return emitError(fileLoc) << "unsupported: graph output '"
                                << output.name() << "' is not a tensor";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

static const char *onnxTypeName(int32_t type) {
  if (onnx::TensorProto_DataType_IsValid(type))
    return onnx::TensorProto_DataType_Name(
               static_cast<onnx::TensorProto_DataType>(type))
        .c_str();
  return "an unknown type";
}

FailureOr<Type> Importer::elementType(int32_t onnxType, const Twine &what) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return Type(builder.getF32Type());
  case onnx::TensorProto::FLOAT16:
    return Type(builder.getF16Type());
  case onnx::TensorProto::BFLOAT16:
    return Type(builder.getBF16Type());
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::BOOL: // as 0/1
    return Type(builder.getI32Type());
  case onnx::TensorProto::INT64:
    return Type(builder.getI64Type());
  default:
    return emitError(fileLoc)
           << "unsupported element type " << onnxTypeName(onnxType) << " of "
           << what << " (parc supports FLOAT, FLOAT16, BFLOAT16, INT32, "
           << "INT64 and BOOL as INT32)";
  }
}

/// A 16-bit float pattern as a double.
static double halfToDouble(uint16_t bits, bool bfloat) {
  if (bfloat) {
    uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, 4);
    return value;
  }
  llvm::APFloat value(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  return value.convertToFloat();
}

FailureOr<KnownTensor> Importer::readTensor(const onnx::TensorProto &tensor,
                                            const Twine &what) {
  FailureOr<Type> element = elementType(tensor.data_type(), what);
  if (failed(element))
    return failure();
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  for (int64_t size : shape)
    if (size < 0)
      return emitError(fileLoc) << what << " has a negative dimension";
  if (!getCheckedTensorBytes(RankedTensorType::get(shape, *element)))
    return emitError(fileLoc) << what << " holds more than 2^62 bytes";
  KnownTensor result;
  result.type = RankedTensorType::get(shape, *element);
  int64_t count = result.type.getNumElements();
  FailureOr<std::string> external;
  bool isExternal = tensor.data_location() == onnx::TensorProto::EXTERNAL;
  if (isExternal && failed(external = readExternalData(tensor, what)))
    return failure();
  const std::string &raw = isExternal ? *external : tensor.raw_data();
  bool hasRaw = isExternal || tensor.has_raw_data();
  auto readRaw = [&](auto sample, auto convert) {
    using T = decltype(sample);
    for (int64_t i = 0; i < count; ++i) {
      T value;
      std::memcpy(&value, raw.data() + i * sizeof(T), sizeof(T));
      convert(value);
    }
  };
  auto toFloat = [&](auto v) { result.values.push_back(v); };
  auto toInteger = [&](auto v) {
    result.integers.push_back(static_cast<int64_t>(v));
  };
  size_t width = 0;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    width = 4;
    break;
  case onnx::TensorProto::INT64:
    width = 8;
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    width = 2;
    break;
  case onnx::TensorProto::BOOL:
    width = 1;
    break;
  }
  if (hasRaw) {
    if (raw.size() != count * width)
      return emitError(fileLoc) << what << " holds " << raw.size()
                                << " bytes, expected " << count * width;
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      readRaw(float(), toFloat);
      break;
    case onnx::TensorProto::INT32:
      readRaw(int32_t(), toInteger);
      break;
    case onnx::TensorProto::INT64:
      readRaw(int64_t(), toInteger);
      break;
    case onnx::TensorProto::BOOL:
      readRaw(uint8_t(), [&](uint8_t v) { toInteger(v ? 1 : 0); });
      break;
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: {
      bool bfloat = tensor.data_type() == onnx::TensorProto::BFLOAT16;
      readRaw(uint16_t(),
              [&](uint16_t v) { toFloat(halfToDouble(v, bfloat)); });
      break;
    }
    }
    return result;
  }
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : tensor.float_data())
      toFloat(v);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : tensor.int64_data())
      toInteger(v);
    break;
  case onnx::TensorProto::INT32:
    for (int32_t v : tensor.int32_data())
      toInteger(v);
    break;
  case onnx::TensorProto::BOOL:
    for (int32_t v : tensor.int32_data())
      toInteger(v ? 1 : 0);
    break;
  default: {
    bool bfloat = tensor.data_type() == onnx::TensorProto::BFLOAT16;
    for (int32_t v : tensor.int32_data())
      toFloat(halfToDouble(static_cast<uint16_t>(v), bfloat));
  }
  }
  if (result.size() != count)
    return emitError(fileLoc) << what << " holds " << result.size()
                              << " values, expected " << count;
  return result;
}

// ONNX's external data: the bytes lie in `location` (relative to the
// model's directory) from `offset`, `length` of them (else to the end), in
// raw_data's layout.
FailureOr<std::string>
Importer::readExternalData(const onnx::TensorProto &tensor, const Twine &what) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    auto number = [&](uint64_t &value) -> LogicalResult {
      if (StringRef(entry.value()).getAsInteger(10, value))
        return emitError(fileLoc)
               << what << "'s external data has " << entry.key() << " '"
               << entry.value() << "', not a byte count";
      return success();
    };
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" && failed(number(offset)))
      return failure();
    else if (entry.key() == "length" && failed(number(length.emplace())))
      return failure();
  }
  // Next to the model only: an absolute path or one that climbs out of its
  // directory is refused.
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      llvm::is_contained(llvm::make_range(llvm::sys::path::begin(location),
                                          llvm::sys::path::end(location)),
                         ".."))
    return emitError(fileLoc)
           << what << " keeps its data in an external file whose location '"
           << location << "' is not a path relative to the model's directory";
  SmallString<256> file = llvm::sys::path::parent_path(path);
  llvm::sys::path::append(file, location);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(fileLoc)
           << what << " keeps its data in '" << file
           << "', which cannot be read: " << buffer.getError().message();
  uint64_t size = (*buffer)->getBufferSize();
  uint64_t bytes = length.value_or(offset <= size ? size - offset : 0);
  if (offset > size || bytes > size - offset)
    return emitError(fileLoc)
           << what << " reads bytes [" << offset << ", " << offset + bytes
           << ") of '" << file << "', which holds " << size;
  return std::string((*buffer)->getBufferStart() + offset, bytes);
}

DenseElementsAttr Importer::denseAttr(const KnownTensor &tensor) {
  Type element = tensor.type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (double v : tensor.values) {
      APFloat value(v);
      bool lost;
      value.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &lost);
      values.push_back(value);
    }
    return DenseElementsAttr::get(tensor.type, values);
  }
  unsigned width = element.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t v : tensor.integers)
    values.push_back(
        APInt(width, v, /*isSigned=*/true, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(tensor.type, values);
}

Value Importer::constant(const KnownTensor &tensor) {
  return ConstantOp::create(builder, fileLoc, denseAttr(tensor));
}

Value Importer::scalarConstant(Type element, double value) {
  KnownTensor tensor{RankedTensorType::get({}, element), {}, {}};
  if (tensor.isInteger())
    tensor.integers.push_back(static_cast<int64_t>(value));
  else
    tensor.values.push_back(value);
  return constant(tensor);
}

//===----------------------------------------------------------------------===//
// Node helpers
//===----------------------------------------------------------------------===//

Location Importer::nodeLoc(const onnx::NodeProto &node) {
  std::string name = node.name().empty() ? node.op_type() : node.name();
  return NameLoc::get(builder.getStringAttr(name), fileLoc);
}

InFlightDiagnostic Importer::nodeError(const onnx::NodeProto &node) {
  return emitError(nodeLoc(node))
         << node.op_type() << " node '" << node.name() << "': ";
}

LogicalResult Importer::unsupported(const onnx::NodeProto &node,
                                    const Twine &why) {
  return nodeError(node) << "unsupported: " << why;
}

FailureOr<Value> Importer::operand(const onnx::NodeProto &node, int index) {
  if (!hasOperand(node, index))
    return nodeError(node) << "input " << index << " is missing";
  const std::string &name = node.input(index);
  auto value = values.find(name);
  if (value != values.end())
    return value->second;
  auto tensor = known.find(name);
  if (tensor != known.end()) {
    Value materialized = constant(tensor->second);
    values[name] = materialized;
    return materialized;
  }
  if (nanTests.count(name))
    return unsupported(node, "'" + name + "' is an IsNaN; " + kNanTestUse);
  return nodeError(node) << "input '" << name << "' is not defined";
}

FailureOr<KnownTensor> Importer::knownOperand(const onnx::NodeProto &node,
                                              int index, StringRef role) {
  auto tensor = known.find(node.input(index));
  if (tensor == known.end())
    return nodeError(node) << "unsupported: input '" << node.input(index)
                           << "' (" << role
                           << ") must be a constant (an initializer or a "
                              "Constant node)";
  return tensor->second;
}

FailureOr<SmallVector<int64_t>>
Importer::knownInts(const onnx::NodeProto &node, int index, StringRef role) {
  FailureOr<KnownTensor> tensor = knownOperand(node, index, role);
  if (failed(tensor))
    return failure();
  if (!tensor->isInteger())
    return nodeError(node) << "input '" << node.input(index) << "' (" << role
                           << ") must hold integers, not "
                           << tensor->type.getElementType();
  return SmallVector<int64_t>(tensor->integers.begin(), tensor->integers.end());
}

const onnx::AttributeProto *Importer::attribute(const onnx::NodeProto &node,
                                                StringRef name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t Importer::intAttr(const onnx::NodeProto &node, StringRef name,
                          int64_t fallback) {
  const onnx::AttributeProto *attr = attribute(node, name);
  return attr ? attr->i() : fallback;
}

float Importer::floatAttr(const onnx::NodeProto &node, StringRef name,
                          float fallback) {
  const onnx::AttributeProto *attr = attribute(node, name);
  return attr ? attr->f() : fallback;
}

std::optional<SmallVector<int64_t>>
Importer::intsAttr(const onnx::NodeProto &node, StringRef name) {
  const onnx::AttributeProto *attr = attribute(node, name);
  if (!attr)
    return std::nullopt;
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

FailureOr<int64_t> Importer::normalizeAxis(const onnx::NodeProto &node,
                                           int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return nodeError(node) << "axis " << axis << " is out of range for rank "
                           << rank;
  return axis < 0 ? axis + rank : axis;
}

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

static bool isFloat(Value value) {
  return isa<FloatType>(typeOf(value).getElementType());
}

LogicalResult Importer::requireFloat(const onnx::NodeProto &node, Value value,
                                     StringRef role) {
  if (isFloat(value))
    return success();
  std::string type;
  llvm::raw_string_ostream(type) << typeOf(value).getElementType();
  return unsupported(node, Twine(role) + " has integer type " + type +
                               "; parc computes this op on floats only");
}

Value Importer::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, typeOf(value).getElementType());
  if (type == value.getType())
    return value;
  return ReshapeOp::create(builder, value.getLoc(), type, value);
}

//===----------------------------------------------------------------------===//
// Op importers
//===----------------------------------------------------------------------===//

LogicalResult Importer::importGemm(const onnx::NodeProto &node) {
  FailureOr<Value> a = operand(node, 0), b = operand(node, 1);
  if (failed(a) || failed(b) || failed(requireFloat(node, *a, "A")) ||
      failed(requireFloat(node, *b, "B")))
    return failure();
  Location loc = nodeLoc(node);
  Type element = typeOf(*a).getElementType();
  float alpha = floatAttr(node, "alpha", 1.0f), beta = floatAttr(node, "beta", 1.0f);
  FailureOr<Value> result =
      create<MatmulOp>(loc, *a, *b, intAttr(node, "transA", 0) != 0,
                       intAttr(node, "transB", 0) != 0);
  if (succeeded(result) && alpha != 1.0f)
    result = create<MulOp>(loc, *result, scalarConstant(element, alpha));
  if (succeeded(result) && hasOperand(node, 2)) {
    FailureOr<Value> bias = operand(node, 2);
    if (succeeded(bias) && beta != 1.0f)
      bias = create<MulOp>(loc, *bias, scalarConstant(element, beta));
    result = failed(bias) ? bias : create<AddOp>(loc, *result, *bias);
  }
  return define(node, 0, result);
}

LogicalResult Importer::importMatMul(const onnx::NodeProto &node) {
  FailureOr<Value> a = operand(node, 0), b = operand(node, 1);
  if (failed(a) || failed(b) || failed(requireFloat(node, *a, "A")) ||
      failed(requireFloat(node, *b, "B")))
    return failure();
  Value lhs = *a, rhs = *b;
  bool vectorLhs = typeOf(lhs).getRank() == 1,
       vectorRhs = typeOf(rhs).getRank() == 1;
  if (vectorLhs)
    lhs = reshape(lhs, {1, typeOf(lhs).getDimSize(0)});
  if (vectorRhs)
    rhs = reshape(rhs, {typeOf(rhs).getDimSize(0), 1});
  FailureOr<Value> product =
      create<MatmulOp>(nodeLoc(node), lhs, rhs, false, false);
  if (failed(product))
    return failure();
  Value result = *product;
  if (vectorLhs || vectorRhs) {
    SmallVector<int64_t> shape(typeOf(result).getShape());
    if (vectorRhs)
      shape.erase(shape.end() - 1);
    if (vectorLhs)
      shape.erase(shape.end() - (vectorRhs ? 1 : 2));
    result = reshape(result, shape);
  }
  define(node, 0, result);
  return success();
}

LogicalResult Importer::importReshape(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  FailureOr<SmallVector<int64_t>> spec = knownInts(node, 1, "shape");
  if (failed(data) || failed(spec))
    return failure();
  RankedTensorType type = typeOf(*data);
  bool allowZero = intAttr(node, "allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t inferred = -1, product = 1;
  for (auto [index, dim] : llvm::enumerate(*spec)) {
    if (dim == 0 && !allowZero) {
      if (static_cast<int64_t>(index) >= type.getRank())
        return nodeError(node) << "shape entry " << index
                               << " is 0 (copy) but the input has rank "
                               << type.getRank();
      dim = type.getDimSize(index);
    } else if (dim == 0) {
      return unsupported(node, "allowzero with a zero in the shape (empty "
                               "tensors)");
    }
    if (dim == -1) {
      if (inferred >= 0)
        return nodeError(node) << "shape has more than one -1";
      inferred = index;
      shape.push_back(1);
      continue;
    }
    if (dim < 0)
      return nodeError(node) << "shape entry " << index << " is " << dim;
    shape.push_back(dim);
    product *= dim;
  }
  if (inferred >= 0) {
    if (product == 0 || type.getNumElements() % product != 0)
      return nodeError(node) << "cannot infer the -1 of the shape";
    shape[inferred] = type.getNumElements() / product;
  }
  if (RankedTensorType::get(shape, type.getElementType()).getNumElements() !=
      type.getNumElements())
    return nodeError(node) << "the shape does not keep the element count";
  define(node, 0, reshape(*data, shape));
  return success();
}

LogicalResult Importer::importGather(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  RankedTensorType type = typeOf(*data);
  FailureOr<int64_t> axis =
      normalizeAxis(node, intAttr(node, "axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  Location loc = nodeLoc(node);
  // An embedding lookup: any integer ids, evaluated at run time.
  if (!known.count(node.input(1)) && *axis == 0 && type.getRank() == 2 &&
      isFloat(*data)) {
    FailureOr<Value> ids = operand(node, 1);
    if (failed(ids))
      return failure();
    return define(node, 0, create<EmbeddingOp>(loc, *data, *ids, Value()));
  }
  // Otherwise the indices must be known.
  auto indices = known.find(node.input(1));
  if (indices == known.end())
    return unsupported(
        node, "input '" + node.input(1) +
                  "' (indices) must be a constant (an initializer or a "
                  "Constant node) unless the data is a 2-D float table "
                  "gathered along axis 0 (an embedding lookup)");
  return define(node, 0, gatherKnown(node, *data, *axis, indices->second));
}

FailureOr<Value> Importer::gatherKnown(const onnx::NodeProto &node, Value data,
                                       int64_t axis,
                                       const KnownTensor &indices) {
  if (!indices.isInteger())
    return nodeError(node) << "indices must be integers";
  if (indices.size() == 0)
    return unsupported(node, "empty indices (empty tensors)");
  RankedTensorType type = typeOf(data);
  int64_t size = type.getDimSize(axis);
  // One slice per run of consecutive indices, joined: indices in order
  // (a mask read back through flattened positions) are the data itself.
  SmallVector<std::pair<int64_t, int64_t>> runs; // (first, length)
  for (int64_t index : indices.integers) {
    if (index < -size || index >= size)
      return nodeError(node) << "index " << index << " is out of range";
    if (index < 0)
      index += size;
    if (!runs.empty() && runs.back().first + runs.back().second == index)
      ++runs.back().second;
    else
      runs.push_back({index, 1});
  }
  Location loc = nodeLoc(node);
  SmallVector<Value> pieces;
  for (auto [first, length] : runs) {
    if (first == 0 && length == size) {
      pieces.push_back(data);
      continue;
    }
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    offsets[axis] = first;
    sizes[axis] = length;
    pieces.push_back(
        SliceOp::create(builder, loc, data, offsets, sizes, strides));
  }
  Value joined = pieces.size() == 1
                     ? pieces[0]
                     : ConcatOp::create(builder, loc, pieces, axis).getResult();
  SmallVector<int64_t> shape(type.getShape().take_front(axis));
  llvm::append_range(shape, indices.type.getShape());
  llvm::append_range(shape, type.getShape().drop_front(axis + 1));
  return reshape(joined, shape);
}

LogicalResult Importer::importGatherND(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  FailureOr<KnownTensor> indices = knownOperand(node, 1, "indices");
  if (failed(data) || failed(indices))
    return failure();
  if (intAttr(node, "batch_dims", 0) != 0)
    return unsupported(node, "batch_dims other than 0");
  if (!indices->isInteger())
    return nodeError(node) << "indices must be integers";
  RankedTensorType type = typeOf(*data);
  ArrayRef<int64_t> indexShape = indices->type.getShape();
  int64_t depth = indexShape.empty() ? 0 : indexShape.back();
  if (depth < 1 || depth > type.getRank())
    return nodeError(node) << "the last dimension of the indices must be in "
                              "[1, "
                           << type.getRank() << "] (the data's rank)";
  // Each index tuple addresses a row of the data's first `depth`
  // dimensions flattened into one: a Gather along that dimension.
  ArrayRef<int64_t> addressed = type.getShape().take_front(depth);
  KnownTensor rows{
      RankedTensorType::get(indexShape.drop_back(), builder.getI64Type()),
      {},
      {}};
  for (size_t start = 0; start < indices->integers.size(); start += depth) {
    int64_t row = 0;
    for (int64_t dim = 0; dim < depth; ++dim) {
      int64_t index = indices->integers[start + dim], size = addressed[dim];
      if (index < -size || index >= size)
        return nodeError(node) << "index " << index << " is out of range for "
                               << "dimension " << dim << " of size " << size;
      row = row * size + (index < 0 ? index + size : index);
    }
    rows.integers.push_back(row);
  }
  SmallVector<int64_t> flatShape{ShapedType::getNumElements(addressed)};
  llvm::append_range(flatShape, type.getShape().drop_front(depth));
  return define(node, 0, gatherKnown(node, reshape(*data, flatShape), 0, rows));
}

LogicalResult Importer::importReduce(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data) || failed(requireFloat(node, *data, "data")))
    return failure();
  RankedTensorType type = typeOf(*data);
  SmallVector<int64_t> axes;
  // ReduceSum takes its axes as an input (from opset 13, the oldest
  // imported), the other reductions from opset 18; an attribute before.
  const std::string &op = node.op_type();
  if (op == "ReduceSum" || opset >= 18) {
    if (hasOperand(node, 1)) {
      FailureOr<SmallVector<int64_t>> given = knownInts(node, 1, "axes");
      if (failed(given))
        return failure();
      axes = *given;
    }
  } else if (auto given = intsAttr(node, "axes")) {
    axes = *given;
  }
  bool keepdims = intAttr(node, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (intAttr(node, "noop_with_empty_axes", 0) != 0) {
      define(node, 0, *data);
      return success();
    }
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      axes.push_back(dim);
  }
  for (int64_t &axis : axes) {
    FailureOr<int64_t> normal = normalizeAxis(node, axis, type.getRank());
    if (failed(normal))
      return failure();
    axis = *normal;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Location loc = nodeLoc(node);
  Value result;
  if (op == "ReduceMean")
    result = ReduceMeanOp::create(builder, loc, *data, axes, keepdims);
  else if (op == "ReduceLogSumExp")
    result = ReduceLogSumExpOp::create(builder, loc, *data, axes, keepdims);
  else if (op == "ReduceMax")
    result = ReduceMaxOp::create(builder, loc, *data, axes, keepdims);
  else
    result = ReduceSumOp::create(builder, loc, *data, axes, keepdims);
  define(node, 0, result);
  return success();
}

LogicalResult Importer::importSplit(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  RankedTensorType type = typeOf(*data);
  FailureOr<int64_t> axis =
      normalizeAxis(node, intAttr(node, "axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t size = type.getDimSize(*axis), parts = node.output_size();
  SmallVector<int64_t> sizes;
  if (hasOperand(node, 1)) {
    FailureOr<SmallVector<int64_t>> given = knownInts(node, 1, "split");
    if (failed(given))
      return failure();
    sizes = *given;
  } else if (size % parts == 0) {
    sizes.assign(parts, size / parts);
  } else if (opset >= 18 && attribute(node, "num_outputs")) {
    // Opset 18's num_outputs: parts of ceil(size / parts), the last smaller.
    int64_t chunk = (size + parts - 1) / parts;
    sizes.assign(parts, chunk);
    sizes.back() = size - chunk * (parts - 1);
  } else {
    return nodeError(node) << "dimension " << size << " does not split into "
                           << parts << " equal parts";
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    return nodeError(node) << sizes.size() << " split sizes for " << parts
                           << " outputs";
  int64_t start = 0;
  for (auto [index, part] : llvm::enumerate(sizes)) {
    if (part <= 0)
      return unsupported(node, "a split of size 0 (empty tensors)");
    SmallVector<int64_t> offsets(type.getRank(), 0), shape(type.getShape()),
        strides(type.getRank(), 1);
    offsets[*axis] = start;
    shape[*axis] = part;
    start += part;
    define(node, index,
           SliceOp::create(builder, nodeLoc(node), *data, offsets, shape,
                           strides));
  }
  if (start != size)
    return nodeError(node) << "split sizes add up to " << start
                           << ", not the dimension's " << size;
  return success();
}

// Flatten: [d0 .. d(axis-1), d(axis) ..] -> [d0 * .. * d(axis-1), the rest].
LogicalResult Importer::importFlatten(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  RankedTensorType type = typeOf(*data);
  int64_t rank = type.getRank();
  int64_t axis = intAttr(node, "axis", 1);
  // Unlike other axes, Flatten's may equal the rank (all in the rows).
  if (axis < -rank || axis > rank)
    return nodeError(node) << "axis " << axis << " is outside [" << -rank
                           << ", " << rank << "]";
  if (axis < 0)
    axis += rank;
  int64_t rows = 1, columns = 1;
  for (int64_t dim = 0; dim < rank; ++dim)
    (dim < axis ? rows : columns) *= type.getDimSize(dim);
  define(node, 0, reshape(*data, {rows, columns}));
  return success();
}

// Expand: numpy broadcasting of the input and a constant shape.
LogicalResult Importer::importExpand(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = knownInts(node, 1, "shape");
  if (failed(shape))
    return failure();
  RankedTensorType type = typeOf(*data);
  int64_t rank = std::max<int64_t>(type.getRank(), shape->size());
  SmallVector<int64_t> result(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t fromEnd = rank - 1 - i;
    int64_t have = fromEnd < type.getRank()
                       ? type.getDimSize(type.getRank() - 1 - fromEnd)
                       : 1;
    int64_t want = fromEnd < static_cast<int64_t>(shape->size())
                       ? (*shape)[shape->size() - 1 - fromEnd]
                       : 1;
    if (have != want && have != 1 && want != 1)
      return nodeError(node)
             << "cannot broadcast dimension " << have << " to " << want;
    if (want < 0)
      return nodeError(node) << "shape has a negative dimension " << want;
    result[i] = have == 1 ? want : have;
  }
  auto resultType = RankedTensorType::get(result, type.getElementType());
  define(node, 0,
         resultType == type ? *data
                            : Value(BroadcastToOp::create(
                                  builder, nodeLoc(node), resultType, *data)));
  return success();
}

LogicalResult Importer::importSlice(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  FailureOr<SmallVector<int64_t>> starts = knownInts(node, 1, "starts");
  if (failed(data) || failed(starts))
    return failure();
  FailureOr<SmallVector<int64_t>> ends = knownInts(node, 2, "ends");
  if (failed(ends))
    return failure();
  RankedTensorType type = typeOf(*data);
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes, steps(starts->size(), 1);
  if (hasOperand(node, 3)) {
    FailureOr<SmallVector<int64_t>> given = knownInts(node, 3, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (hasOperand(node, 4)) {
    FailureOr<SmallVector<int64_t>> given = knownInts(node, 4, "steps");
    if (failed(given))
      return failure();
    steps = *given;
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return nodeError(node) << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(node, axes[i], rank);
    if (failed(axis))
      return failure();
    if (steps[i] <= 0)
      return unsupported(node, "step " + Twine(steps[i]) +
                                   " (only positive steps)");
    int64_t dim = type.getDimSize(*axis);
    auto clampIndex = [&](int64_t index) {
      if (index < 0)
        index += dim;
      return std::clamp<int64_t>(index, 0, dim);
    };
    int64_t start = clampIndex((*starts)[i]), end = clampIndex((*ends)[i]);
    int64_t count = end > start ? (end - start + steps[i] - 1) / steps[i] : 0;
    if (count == 0)
      return unsupported(node, "an empty slice (empty tensors)");
    offsets[*axis] = start;
    sizes[*axis] = count;
    strides[*axis] = steps[i];
  }
  define(node, 0,
         SliceOp::create(builder, nodeLoc(node), *data, offsets, sizes,
                         strides));
  return success();
}

LogicalResult Importer::importSqueeze(const onnx::NodeProto &node,
                                      bool unsqueeze) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  RankedTensorType type = typeOf(*data);
  SmallVector<int64_t> axes;
  if (hasOperand(node, 1)) {
    FailureOr<SmallVector<int64_t>> given = knownInts(node, 1, "axes");
    if (failed(given))
      return failure();
    axes = *given;
  } else if (unsqueeze) {
    return nodeError(node) << "has no axes";
  }
  SmallVector<int64_t> shape;
  if (unsqueeze) {
    int64_t rank = type.getRank() + axes.size();
    SmallVector<bool> inserted(rank, false);
    for (int64_t axis : axes) {
      FailureOr<int64_t> normal = normalizeAxis(node, axis, rank);
      if (failed(normal))
        return failure();
      inserted[*normal] = true;
    }
    int64_t next = 0;
    for (int64_t dim = 0; dim < rank; ++dim)
      shape.push_back(inserted[dim] ? 1 : type.getDimSize(next++));
  } else {
    SmallVector<bool> removed(type.getRank(), axes.empty());
    for (int64_t axis : axes) {
      FailureOr<int64_t> normal = normalizeAxis(node, axis, type.getRank());
      if (failed(normal))
        return failure();
      if (type.getDimSize(*normal) != 1)
        return nodeError(node) << "cannot squeeze dimension " << *normal
                               << " of size " << type.getDimSize(*normal);
      removed[*normal] = true;
    }
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (!removed[dim] || type.getDimSize(dim) != 1)
        shape.push_back(type.getDimSize(dim));
  }
  define(node, 0, reshape(*data, shape));
  return success();
}

LogicalResult Importer::importCast(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  int64_t to = intAttr(node, "to", 0);
  FailureOr<Type> element =
      elementType(to, "the result of Cast node '" + node.name() + "'");
  if (failed(element))
    return failure();
  if (to == onnx::TensorProto::BOOL)
    return define(node, 0, toBoolean(*data, nodeLoc(node)));
  RankedTensorType type = typeOf(*data);
  if (type.getElementType() == *element) {
    define(node, 0, *data);
    return success();
  }
  define(node, 0,
         CastOp::create(builder, nodeLoc(node),
                        RankedTensorType::get(type.getShape(), *element),
                        *data));
  return success();
}

LogicalResult Importer::importConstant(const onnx::NodeProto &node) {
  const onnx::AttributeProto *attr = nullptr;
  for (const onnx::AttributeProto &candidate : node.attribute())
    attr = &candidate;
  if (!attr)
    return nodeError(node) << "has no value";
  KnownTensor tensor;
  if (attr->name() == "value") {
    FailureOr<KnownTensor> read =
        readTensor(attr->t(), "the value of Constant node '" + node.name() + "'");
    if (failed(read))
      return failure();
    tensor = *read;
  } else if (attr->name() == "value_float") {
    tensor = {RankedTensorType::get({}, builder.getF32Type()), {attr->f()}, {}};
  } else if (attr->name() == "value_floats") {
    tensor.type = RankedTensorType::get({attr->floats_size()},
                                        builder.getF32Type());
    tensor.values.assign(attr->floats().begin(), attr->floats().end());
  } else if (attr->name() == "value_int") {
    tensor = {RankedTensorType::get({}, builder.getI64Type()), {}, {attr->i()}};
  } else if (attr->name() == "value_ints") {
    tensor.type = RankedTensorType::get({attr->ints_size()},
                                        builder.getI64Type());
    tensor.integers.assign(attr->ints().begin(), attr->ints().end());
  } else {
    return unsupported(node, "a Constant given as '" + attr->name() + "'");
  }
  known[node.output(0)] = tensor;
  return success();
}

LogicalResult Importer::importLayerNorm(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0), scale = operand(node, 1);
  if (failed(data) || failed(scale) || failed(requireFloat(node, *data, "X")))
    return failure();
  RankedTensorType type = typeOf(*data);
  FailureOr<int64_t> axis =
      normalizeAxis(node, intAttr(node, "axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  if (*axis != type.getRank() - 1)
    return unsupported(node, "normalization over axis " + Twine(*axis) +
                                 " of a rank-" + Twine(type.getRank()) +
                                 " input (parc.layer_norm normalizes the "
                                 "last axis only)");
  for (int index = 1; index < node.output_size(); ++index)
    if (!node.output(index).empty())
      return unsupported(node, "the Mean and InvStdDev outputs");
  int64_t features = type.getShape().back();
  Value gamma = reshape(*scale, {features});
  Value beta;
  if (hasOperand(node, 2)) {
    FailureOr<Value> bias = operand(node, 2);
    if (failed(bias))
      return failure();
    beta = reshape(*bias, {features});
  } else {
    KnownTensor zeros{RankedTensorType::get({features}, type.getElementType()),
                      std::vector<double>(features, 0.0)};
    beta = constant(zeros);
  }
  return define(node, 0,
                create<LayerNormOp>(nodeLoc(node), *data, gamma, beta,
                                    APFloat(static_cast<double>(
                                        floatAttr(node, "epsilon", 1e-5f)))));
}

LogicalResult Importer::importTrilu(const onnx::NodeProto &node) {
  FailureOr<Value> data = operand(node, 0);
  if (failed(data))
    return failure();
  int64_t k = 0;
  if (hasOperand(node, 1)) {
    FailureOr<SmallVector<int64_t>> given = knownInts(node, 1, "k");
    if (failed(given))
      return failure();
    k = (*given)[0];
  }
  bool upper = intAttr(node, "upper", 1) != 0;
  RankedTensorType type = typeOf(*data);
  if (type.getRank() < 2)
    return nodeError(node) << "input has rank < 2";
  int64_t rows = type.getDimSize(type.getRank() - 2),
          cols = type.getShape().back();
  KnownTensor mask{
      RankedTensorType::get({rows, cols}, builder.getI32Type()), {}, {}};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.integers.push_back(upper ? (j - i >= k) : (j - i <= k));
  Value zero = scalarConstant(type.getElementType(), 0.0);
  define(node, 0,
         SelectOp::create(builder, nodeLoc(node), constant(mask), *data, zero));
  return success();
}

LogicalResult Importer::checkOpSupported(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return nodeError(node) << "unsupported op '" << node.domain() << "."
                           << op << "' (domain '" << node.domain()
                           << "'); supported ops (default domain): "
                           << llvm::join(getSupportedOnnxOps(), ", ");
  if (!llvm::is_contained(getSupportedOnnxOps(), op) &&
      !llvm::is_contained(getFoldedOps(), op))
    return nodeError(node) << "unsupported op '" << op << "'; supported ops: "
                           << llvm::join(getSupportedOnnxOps(), ", ")
                           << "; evaluated at import when their inputs are "
                              "known: "
                           << llvm::join(getFoldedOps(), ", ");
  return success();
}

LogicalResult Importer::checkConverted(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  if (!llvm::is_contained(getSupportedOnnxOps(), op)) {
    auto computed = llvm::find_if(node.input(), [&](const std::string &name) {
      return !name.empty() && (!known.count(name) || parameters.contains(name));
    });
    return nodeError(node)
           << "unsupported: '" << op
           << "' imports only when it is evaluated at import time, from "
              "inputs known then (constants and shapes)"
           << (computed != node.input().end()
                   ? "; input '" + *computed +
                         "' (computed by the graph) must be a constant"
                   : std::string(" and small enough to fold"));
  }
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  FailureOr<bool> folded = foldNode(node);
  if (failed(folded))
    return failure();
  if (*folded)
    return success();
  if (failed(checkOpSupported(node)) || failed(checkConverted(node)))
    return failure();
  Location loc = nodeLoc(node);
  builder.setInsertionPointToEnd(builder.getInsertionBlock());

  auto binary = [&](auto build) -> LogicalResult {
    FailureOr<Value> lhs = operand(node, 0), rhs = operand(node, 1);
    if (failed(lhs) || failed(rhs) || failed(requireFloat(node, *lhs, "A")) ||
        failed(requireFloat(node, *rhs, "B")))
      return failure();
    return define(node, 0, build(*lhs, *rhs));
  };
  auto unary = [&](auto build) -> LogicalResult {
    FailureOr<Value> input = operand(node, 0);
    if (failed(input) || failed(requireFloat(node, *input, "X")))
      return failure();
    return define(node, 0, build(*input));
  };
#define PARC_BINARY(NAME, OP)                                                  \
  if (op == NAME)                                                              \
    return binary([&](Value l, Value r) { return create<OP>(loc, l, r); });
#define PARC_UNARY(NAME, OP)                                                   \
  if (op == NAME)                                                              \
    return unary([&](Value x) { return create<OP>(loc, x); });
  PARC_BINARY("Add", AddOp)
  PARC_BINARY("Sub", SubOp)
  PARC_BINARY("Mul", MulOp)
  PARC_BINARY("Div", DivOp)
  PARC_UNARY("Relu", ReluOp)
  PARC_UNARY("Tanh", TanhOp)
  PARC_UNARY("Sigmoid", SigmoidOp)
  PARC_UNARY("Exp", ExpOp)
  PARC_UNARY("Erf", ErfOp)
  if (op == "Gelu") { // opset 20
    const onnx::AttributeProto *approximate = attribute(node, "approximate");
    std::string form = approximate ? approximate->s() : "none";
    if (form != "none" && form != "tanh")
      return nodeError(node)
             << "approximate must be 'none' or 'tanh', got '" << form << "'";
    return unary([&](Value x) {
      return create<GeluOp>(loc, x,
                            form == "tanh" ? GeluApproximation::Tanh
                                           : GeluApproximation::Erf);
    });
  }
  PARC_UNARY("Sqrt", SqrtOp)
  PARC_UNARY("Neg", NegOp)
  PARC_UNARY("Log", LogOp)
#undef PARC_BINARY
#undef PARC_UNARY
  if (op == "Pow")
    return binary([&](Value base, Value exponent) {
      if (typeOf(exponent).getElementType() != typeOf(base).getElementType())
        exponent = CastOp::create(
            builder, loc,
            RankedTensorType::get(typeOf(exponent).getShape(),
                                  typeOf(base).getElementType()),
            exponent);
      return create<PowOp>(loc, base, exponent);
    });
  if (op == "Softmax" || op == "LogSoftmax") {
    FailureOr<Value> input = operand(node, 0);
    if (failed(input) || failed(requireFloat(node, *input, "input")))
      return failure();
    FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", -1),
                                            typeOf(*input).getRank());
    if (failed(axis))
      return failure();
    FailureOr<Value> result = create<SoftmaxOp>(loc, *input, *axis);
    if (succeeded(result) && op == "LogSoftmax")
      result = create<LogOp>(loc, *result);
    return define(node, 0, result);
  }
  if (op == "Gemm")
    return importGemm(node);
  if (op == "MatMul")
    return importMatMul(node);
  if (op == "LayerNormalization")
    return importLayerNorm(node);
  if (op == "Conv")
    return importConvolution(node);
  if (op == "MaxPool" || op == "AveragePool")
    return importPooling(node);
  if (op == "GlobalAveragePool")
    return importGlobalAveragePool(node);
  if (op == "BatchNormalization")
    return importBatchNorm(node);
  if (op == "Reshape")
    return importReshape(node);
  if (op == "Transpose") {
    FailureOr<Value> input = operand(node, 0);
    if (failed(input))
      return failure();
    int64_t rank = typeOf(*input).getRank();
    SmallVector<int64_t> perm;
    if (auto given = intsAttr(node, "perm"))
      perm = *given;
    else
      for (int64_t dim = rank - 1; dim >= 0; --dim)
        perm.push_back(dim);
    return define(node, 0, create<TransposeOp>(loc, *input, perm));
  }
  if (op == "Gather")
    return importGather(node);
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceLogSumExp" ||
      op == "ReduceMax")
    return importReduce(node);
  if (op == "Concat") {
    SmallVector<Value> inputs;
    for (int index = 0; index < node.input_size(); ++index) {
      FailureOr<Value> input = operand(node, index);
      if (failed(input))
        return failure();
      inputs.push_back(*input);
    }
    FailureOr<int64_t> axis = normalizeAxis(node, intAttr(node, "axis", 0),
                                            typeOf(inputs[0]).getRank());
    if (failed(axis))
      return failure();
    return define(node, 0,
                  inputs.size() == 1
                      ? FailureOr<Value>(inputs[0])
                      : create<ConcatOp>(loc, inputs, *axis));
  }
  if (op == "Split")
    return importSplit(node);
  if (op == "Slice")
    return importSlice(node);
  if (op == "Unsqueeze" || op == "Squeeze")
    return importSqueeze(node, op == "Unsqueeze");
  if (op == "Cast")
    return importCast(node);
  if (op == "Constant")
    return importConstant(node);
  if (op == "Identity") {
    auto it = known.find(node.input(0));
    if (it != known.end() && !values.count(node.input(0))) {
      known[node.output(0)] = it->second;
      return success();
    }
    FailureOr<Value> input = operand(node, 0);
    if (failed(input))
      return failure();
    define(node, 0, *input);
    return success();
  }
  if (op == "IsNaN") {
    // Only in `Where(IsNaN(s), 0, s)` over a softmax s, which the SDPA
    // decompositions of both torch exporters emit: parc.softmax makes a
    // line of -inf zeros already, so that Where is s (see Where below).
    if (!hasOperand(node, 0))
      return nodeError(node) << "input 0 is missing";
    nanTests[node.output(0)] = node.input(0);
    return success();
  }
  if (op == "Where" && nanTests.count(node.input(0))) {
    const std::string &tested = nanTests[node.input(0)];
    auto tensor = hasOperand(node, 1) ? known.find(node.input(1)) : known.end();
    bool zero =
        tensor != known.end() && tensor->second.size() > 0 &&
        llvm::all_of(llvm::seq<int64_t>(0, tensor->second.size()),
                     [&](int64_t i) { return tensor->second.at(i) == 0; });
    auto value =
        hasOperand(node, 2) ? values.find(node.input(2)) : values.end();
    if (!zero || value == values.end() || node.input(2) != tested ||
        !value->second.getDefiningOp<SoftmaxOp>())
      return unsupported(node, kNanTestUse);
    define(node, 0, value->second);
    return success();
  }
  if (op == "Where") {
    FailureOr<Value> condition = operand(node, 0), lhs = operand(node, 1),
                     rhs = operand(node, 2);
    if (failed(condition) || failed(lhs) || failed(rhs))
      return failure();
    return define(node, 0, create<SelectOp>(loc, *condition, *lhs, *rhs));
  }
  if (op == "Trilu")
    return importTrilu(node);
  if (op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
      op == "GreaterOrEqual")
    return importComparison(node);
  if (op == "And" || op == "Or" || op == "Xor" || op == "Not")
    return importLogic(node);
  if (op == "GatherND")
    return importGatherND(node);
  if (op == "Reciprocal")
    return unary([&](Value x) {
      return create<DivOp>(loc, scalarConstant(typeOf(x).getElementType(), 1),
                           x);
    });
  if (op == "Flatten")
    return importFlatten(node);
  if (op == "Expand")
    return importExpand(node);
  if (op == "SoftmaxCrossEntropyLoss") {
    FailureOr<Value> scores = operand(node, 0), labels = operand(node, 1);
    if (failed(scores) || failed(labels) ||
        failed(requireFloat(node, *scores, "scores")))
      return failure();
    const onnx::AttributeProto *reduction = attribute(node, "reduction");
    if (reduction && reduction->s() != "mean")
      return unsupported(node, "reduction '" + reduction->s() +
                                   "' (parc.cross_entropy is the mean)");
    if (hasOperand(node, 2) || attribute(node, "ignore_index") ||
        (node.output_size() > 1 && !node.output(1).empty()))
      return unsupported(node, "class weights, ignore_index or the "
                               "log_prob output");
    if (typeOf(*scores).getRank() != 2)
      return unsupported(node, "scores of rank other than 2 (classes are "
                               "the last dimension in parc)");
    return define(node, 0, create<CrossEntropyOp>(loc, *scores, *labels));
  }
  return nodeError(node) << "internal error: no conversion of the supported "
                            "op '"
                         << op << "'";
}

//===----------------------------------------------------------------------===//
// The graph
//===----------------------------------------------------------------------===//

LogicalResult Importer::buildFunction() {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringMap<const onnx::TensorProto *> initializers;
  for (const onnx::TensorProto &tensor : graph.initializer())
    initializers[tensor.name()] = &tensor;
  for (const onnx::SparseTensorProto &sparse : graph.sparse_initializer()) {
    (void)sparse;
    return emitError(fileLoc) << "unsupported: sparse initializers";
  }

  for (const OnnxInputShape &shape : inputShapes) {
    bool found = false;
    for (const onnx::ValueInfoProto &input : graph.input())
      found |= input.name() == shape.name && !initializers.count(shape.name);
    if (!found)
      return emitError(fileLoc) << "--input-shape names '" << shape.name
                                << "', which is not a graph input";
  }

  // Float initializers are parameters; integer ones (shapes, indices) and
  // single floats (the scales and fill values torch's dynamo exporter
  // stores as initializers) are constants.
  // A parameter is named by its module path where the exporter renamed it.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
  auto addArgument = [&](StringRef onnxName, StringRef parcName,
                         RankedTensorType type, StringRef role) {
    argNames.push_back(onnxName.str());
    argTypes.push_back(type);
    argAttrs.push_back(builder.getDictionaryAttr(
        {builder.getNamedAttr(ParcDialect::kRoleAttrName,
                              builder.getStringAttr(role)),
         builder.getNamedAttr(ParcDialect::kNameAttrName,
                              builder.getStringAttr(parcName))}));
  };
  llvm::StringMap<std::string> modulePathNames = getModulePathNames(graph);
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    FailureOr<KnownTensor> read =
        readTensor(tensor, "initializer '" + tensor.name() + "'");
    if (failed(read))
      return failure();
    if (isa<FloatType>(read->type.getElementType()) &&
        read->type.getNumElements() != 1) {
      auto renamed = modulePathNames.find(tensor.name());
      std::string name =
          renamed == modulePathNames.end() ? tensor.name() : renamed->second;
      addArgument(tensor.name(), name, read->type, "param");
      parameters.insert(tensor.name());
      if (weights)
        weights->push_back({name, read->type, read->values});
    }
    known[tensor.name()] = std::move(*read);
  }
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    // checkGraph() refused non-tensor inputs.
    const onnx::TypeProto_Tensor &tensorType = input.type().tensor_type();
    FailureOr<Type> element = elementType(tensorType.elem_type(),
                                          "graph input '" + input.name() + "'");
    if (failed(element))
      return failure();
    const OnnxInputShape *override = nullptr;
    for (const OnnxInputShape &shape : inputShapes)
      if (shape.name == input.name())
        override = &shape;
    if (!tensorType.has_shape())
      if (!override)
        return emitError(fileLoc)
               << "graph input '" << input.name()
               << "' has no shape; fix it with --input-shape " << input.name()
               << "=d0,d1,...";
    SmallVector<int64_t> shape;
    const auto &dims = tensorType.shape().dim();
    if (override && tensorType.has_shape() &&
        static_cast<int>(override->shape.size()) != dims.size())
      return emitError(fileLoc)
             << "--input-shape gives '" << input.name() << "' rank "
             << override->shape.size() << ", but the model says rank "
             << dims.size();
    if (override) {
      for (auto [index, dim] : llvm::enumerate(dims))
        if (dim.has_dim_value() && dim.dim_value() > 0 &&
            dim.dim_value() != override->shape[index])
          return emitError(fileLoc)
                 << "--input-shape gives '" << input.name() << "' dimension "
                 << index << " = " << override->shape[index]
                 << ", but the model fixes it to " << dim.dim_value();
      shape = override->shape;
    } else {
      for (auto [index, dim] : llvm::enumerate(dims)) {
        if (dim.has_dim_value() && dim.dim_value() == 0)
          return emitError(fileLoc)
                 << "unsupported: graph input '" << input.name()
                 << "' has a dimension of size 0 (empty tensors)";
        if (!dim.has_dim_value() || dim.dim_value() < 0)
          return emitError(fileLoc)
                 << "graph input '" << input.name() << "' has a dynamic "
                 << "dimension " << index
                 << (dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                         : std::string())
                 << "; fix it with --input-shape " << input.name()
                 << "=d0,d1,...";
        shape.push_back(dim.dim_value());
      }
    }
    addArgument(input.name(), input.name(),
                RankedTensorType::get(shape, *element), "input");
  }

  // The function; its result types are known once the body is built.
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, "forward",
                                   builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [index, name] : llvm::enumerate(argNames)) {
    func.setArgAttrs(index, argAttrs[index]);
    values[name] = body->getArgument(index);
  }
  builder.setInsertionPointToEnd(body);
  for (const onnx::NodeProto &node : graph.node())
    if (failed(importNode(node)))
      return failure();

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end()) {
      auto tensor = known.find(output.name());
      if (tensor == known.end() && nanTests.count(output.name()))
        return emitError(fileLoc)
               << "unsupported: graph output '" << output.name()
               << "' is an IsNaN; " << kNanTestUse;
      if (tensor == known.end())
        return emitError(fileLoc) << "graph output '" << output.name()
                                  << "' is not computed";
      values[output.name()] = constant(tensor->second);
      it = values.find(output.name());
    }
    results.push_back(it->second);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [index, output] : llvm::enumerate(graph.output()))
    func.setResultAttr(index, ParcDialect::kNameAttrName,
                       builder.getStringAttr(output.name()));
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> Importer::run() {
  context->loadDialect<ParcDialect, func::FuncDialect>();
  if (failed(load()))
    return failure();
  module = ModuleOp::create(fileLoc);
  if (failed(buildFunction()))
    return failure();
  fuseExportedPatterns(*module);
  if (failed(verify(*module)))
    return failure();
  return std::move(module);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::parc::importOnnx(StringRef path, MLIRContext *context,
                       ArrayRef<OnnxInputShape> inputShapes,
                       SmallVectorImpl<OnnxWeight> *weights) {
  try {
    Importer importer(path, context, inputShapes, weights);
    return importer.run();
  } catch (const std::exception &error) {
    return emitError(FileLineColLoc::get(context, path, 0, 0))
           << "importing the ONNX model failed: " << error.what();
  } catch (...) {
    return emitError(FileLineColLoc::get(context, path, 0, 0))
           << "importing the ONNX model failed";
  }
}
