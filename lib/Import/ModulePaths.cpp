//===- ModulePaths.cpp - names exporter-folded weights by module path -----===//
//
// torch.onnx stores a Linear's weight transposed under a made-up name
// (TorchScript: onnx::MatMul_530, dynamo: val_26). The node that reads it
// still knows the PyTorch module: TorchScript names nodes
// /model/layers.0/self_attn/q_proj/MatMul, dynamo records the module scopes
// in the node's pkg.torch.onnx.name_scopes metadata. The weight is named
// model.layers.0.self_attn.q_proj.weight from them, so that plans address
// imported models by structure, as they do parc-model's.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/StringExtras.h"

#include <google/protobuf/unknown_field_set.h>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::onnx_import;

/// NodeProto.metadata_props (ONNX 1.16, IR 10) is field 9, which libonnx
/// 1.12 does not know: protobuf keeps it among the unknown fields.
static constexpr int kNodeMetadataField = 9;
static constexpr StringLiteral kNameScopesKey = "pkg.torch.onnx.name_scopes";

/// The module path dynamo recorded: its name scopes are a Python list
/// "['', 'model', 'model.layers.0', ..., 'linear']" whose last entry names
/// the op itself and the one before it the innermost module.
static std::string getDynamoModulePath(const onnx::NodeProto &node) {
  const google::protobuf::UnknownFieldSet &unknown = node.unknown_fields();
  for (int index = 0; index < unknown.field_count(); ++index) {
    const google::protobuf::UnknownField &field = unknown.field(index);
    if (field.number() != kNodeMetadataField ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (!entry.ParseFromString(field.length_delimited()) ||
        entry.key() != kNameScopesKey)
      continue;
    StringRef list = StringRef(entry.value()).trim();
    if (!list.consume_front("[") || !list.consume_back("]"))
      return "";
    SmallVector<StringRef> scopes;
    list.split(scopes, ',');
    if (scopes.size() < 2)
      return "";
    StringRef path = scopes[scopes.size() - 2].trim();
    if (!path.consume_front("'") || !path.consume_back("'"))
      return "";
    return path.str();
  }
  return "";
}

/// The module path in a TorchScript node name "/model/layers.0/q_proj/MatMul":
/// the components before the op's own, joined by dots.
static std::string getTorchScriptModulePath(const onnx::NodeProto &node) {
  StringRef name = node.name();
  if (!name.consume_front("/"))
    return "";
  SmallVector<StringRef> parts;
  name.split(parts, '/');
  if (parts.size() < 2 || llvm::is_contained(parts, ""))
    return "";
  return llvm::join(ArrayRef(parts).drop_back(), ".");
}

/// Whether `name` is one the exporter made up rather than a module's
/// parameter name.
static bool isExporterName(StringRef name) {
  if (name.starts_with("onnx::"))
    return true;
  StringRef number = name;
  return number.consume_front("val_") && !number.empty() &&
         llvm::all_of(number, llvm::isDigit);
}

/// "weight" or "bias" for the operand `index` of `node`, or "" for an
/// operand that is neither.
static StringRef getParameterKind(const onnx::NodeProto &node, int index) {
  StringRef op = node.op_type();
  if ((op == "MatMul" || op == "Gemm" || op == "Conv") && index == 1)
    return "weight";
  if ((op == "Gemm" || op == "Conv") && index == 2)
    return "bias";
  if (op == "Add")
    return "bias";
  return "";
}

llvm::StringMap<std::string>
mlir::parc::onnx_import::getModulePathNames(const onnx::GraphProto &graph) {
  llvm::StringSet<> taken, renameable;
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    taken.insert(tensor.name());
    if (isExporterName(tensor.name()))
      renameable.insert(tensor.name());
  }
  // An initializer read by one node operand is that module's parameter.
  llvm::StringMap<std::pair<const onnx::NodeProto *, int>> reader;
  llvm::StringSet<> sharedInitializers;
  for (const onnx::NodeProto &node : graph.node())
    for (auto [index, input] : llvm::enumerate(node.input())) {
      if (!renameable.count(input))
        continue;
      if (!reader.try_emplace(input, &node, index).second)
        sharedInitializers.insert(input);
    }

  llvm::StringMap<std::string> names;
  for (const onnx::TensorProto &tensor : graph.initializer()) {
    auto it = reader.find(tensor.name());
    if (it == reader.end() || sharedInitializers.count(tensor.name()))
      continue;
    auto [node, index] = it->second;
    StringRef kind = getParameterKind(*node, index);
    std::string path = getDynamoModulePath(*node);
    if (path.empty())
      path = getTorchScriptModulePath(*node);
    if (kind.empty() || path.empty())
      continue;
    std::string name = path + "." + kind.str();
    if (!taken.insert(name).second)
      continue;
    names[tensor.name()] = name;
  }
  return names;
}
