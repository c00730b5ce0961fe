//===- ModelConvention.cpp - how a function describes a model -------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"

using namespace mlir;
using namespace mlir::parc;

StringRef mlir::parc::stringifyArgumentRole(ArgumentRole role) {
  switch (role) {
  case ArgumentRole::Param:
    return "param";
  case ArgumentRole::Input:
    return "input";
  case ArgumentRole::Label:
    return "label";
  case ArgumentRole::OptState:
    return "optstate";
  case ArgumentRole::Buffer:
    return "buffer";
  case ArgumentRole::Carry:
    return "carry";
  }
  llvm_unreachable("unknown argument role");
}

static std::optional<ArgumentRole> symbolizeArgumentRole(StringRef role) {
  return llvm::StringSwitch<std::optional<ArgumentRole>>(role)
      .Case("param", ArgumentRole::Param)
      .Case("input", ArgumentRole::Input)
      .Case("label", ArgumentRole::Label)
      .Case("optstate", ArgumentRole::OptState)
      .Case("buffer", ArgumentRole::Buffer)
      .Case("carry", ArgumentRole::Carry)
      .Default(std::nullopt);
}

static bool isModelTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return false;
  Type element = tensor.getElementType();
  return element.isF32() || element.isBF16() || element.isF16() ||
         element.isSignlessInteger(32) || element.isSignlessInteger(64);
}

std::optional<int64_t> mlir::parc::getCheckedTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  int64_t bytes =
      std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
  for (int64_t size : tensor.getShape()) {
    if (size > 0 && bytes > kMaxTensorBytes / size)
      return std::nullopt;
    bytes *= size;
  }
  return bytes;
}

LogicalResult mlir::parc::checkTensorSizes(func::FuncOp func) {
  auto check = [&](Type type, Location loc) -> LogicalResult {
    if (isa<RankedTensorType>(type) && !getCheckedTensorBytes(type))
      return emitError(loc) << type << " holds more than 2^62 bytes";
    return success();
  };
  for (BlockArgument argument : func.getArguments())
    if (failed(check(argument.getType(), argument.getLoc())))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      if (failed(check(type, op->getLoc())))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

static bool isValidUtf8(StringRef text) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  return llvm::isLegalUTF8String(
      &begin, reinterpret_cast<const llvm::UTF8 *>(text.end()));
}

FailureOr<SmallVector<ModelArgument>>
mlir::parc::readModelArguments(func::FuncOp func) {
  if (func.isExternal())
    return func.emitError("model function '")
           << func.getSymName() << "' has no body";
  SmallVector<ModelArgument> arguments;
  llvm::StringMap<unsigned> seen;
  for (BlockArgument argument : func.getArguments()) {
    unsigned index = argument.getArgNumber();
    auto diag = [&]() {
      return emitError(argument.getLoc())
             << "argument #" << index << " of '" << func.getSymName() << "' ";
    };
    if (!isModelTensor(argument.getType()))
      return diag() << "must be a static-shape tensor of f32, bf16, f16, i32 "
                       "or i64, got "
                    << argument.getType();
    if (!getCheckedTensorBytes(argument.getType()))
      return diag() << "has type " << argument.getType()
                    << ", which holds more than 2^62 bytes";
    auto role =
        func.getArgAttrOfType<StringAttr>(index, ParcDialect::kRoleAttrName);
    if (!role)
      return diag() << "needs a string attribute '"
                    << ParcDialect::kRoleAttrName
                    << "' (param, input, label, optstate or carry)";
    std::optional<ArgumentRole> parsedRole =
        symbolizeArgumentRole(role.getValue());
    if (!parsedRole)
      return diag() << "has unknown role '" << role.getValue()
                    << "'; expected param, input, label, optstate or carry";
    auto name =
        func.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
    if (!name || name.getValue().empty())
      return diag() << "needs a non-empty string attribute '"
                    << ParcDialect::kNameAttrName << "'";
    if (!isValidUtf8(name.getValue()))
      return diag() << "has a '" << ParcDialect::kNameAttrName
                    << "' that is not valid UTF-8 (weights files and the "
                       "program description are JSON)";
    auto [it, inserted] = seen.try_emplace(name.getValue(), index);
    if (!inserted)
      return diag() << "repeats the name '" << name.getValue()
                    << "' of argument #" << it->second;
    Attribute init = func.getArgAttr(index, ParcDialect::kInitAttrName);
    if (init && !isa<InitAttr>(init))
      return diag() << "has a '" << ParcDialect::kInitAttrName
                    << "' that is not a #parc.init<...>";
    auto type = cast<RankedTensorType>(argument.getType());
    std::optional<SmallVector<int64_t>> checkpointShape;
    if (Attribute attr =
            func.getArgAttr(index, ParcDialect::kCheckpointShapeAttrName)) {
      // Element counts are compared when a file is loaded: after
      // partitioning, the argument's type is only this rank's part.
      auto shape = dyn_cast<DenseI64ArrayAttr>(attr);
      if (!shape || llvm::any_of(shape.asArrayRef(),
                                 [](int64_t size) { return size < 0; }))
        return diag() << "has a '" << ParcDialect::kCheckpointShapeAttrName
                      << "' that is not an array<i64: ...> of sizes";
      checkpointShape = llvm::to_vector(shape.asArrayRef());
    }
    std::optional<std::string> initFrom;
    if (Attribute attr =
            func.getArgAttr(index, ParcDialect::kInitFromAttrName)) {
      auto source = dyn_cast<StringAttr>(attr);
      if (!source || source.getValue().empty())
        return diag() << "has a '" << ParcDialect::kInitFromAttrName
                      << "' that is not an argument's name";
      initFrom = source.getValue().str();
    }
    arguments.push_back({index, *parsedRole, name.getValue().str(), type,
                         dyn_cast_or_null<InitAttr>(init), checkpointShape,
                         initFrom});
  }
  // A copy starts from an argument that starts on its own, with as many
  // elements (after partitioning, each rank's part may differ). A dedicated
  // parameter server's f32 master starts from the workers' parameter, an
  // argument of the other stage, and then carries that argument's init.
  bool stage = func->hasAttr(kParameterServerAttrName) &&
               func->hasAttr(kStageAttrName);
  for (const ModelArgument &argument : arguments) {
    if (!argument.initFrom)
      continue;
    auto source = seen.find(*argument.initFrom);
    if (source == seen.end() && stage && argument.init)
      continue;
    auto diag = [&]() {
      return emitError(func.getArgument(argument.index).getLoc())
             << "argument #" << argument.index << " of '" << func.getSymName()
             << "' starts from '" << *argument.initFrom << "' ("
             << ParcDialect::kInitFromAttrName << "), ";
    };
    if (source == seen.end())
      return diag() << "which is no argument's name";
    if (arguments[source->second].initFrom)
      return diag() << "which starts from another argument itself";
  }

  llvm::StringSet<> resultNames;
  for (auto [index, name] : llvm::enumerate(getResultNames(func))) {
    if (!isValidUtf8(name))
      return func.emitError() << "result #" << index << " of '"
                              << func.getSymName() << "' has a name that is "
                              << "not valid UTF-8";
    if (!resultNames.insert(name).second)
      return func.emitError() << "result #" << index << " of '"
                              << func.getSymName() << "' repeats the name '"
                              << name << "'";
  }
  return arguments;
}

BlockArgument mlir::parc::getSteppedParameter(func::FuncOp func,
                                              Value updated) {
  auto argument = dyn_cast<BlockArgument>(updated);
  if (!argument || argument.getOwner()->getParentOp() != func)
    return {};
  auto source = func.getArgAttrOfType<StringAttr>(
      argument.getArgNumber(), ParcDialect::kInitFromAttrName);
  if (!source)
    return argument;
  for (BlockArgument other : func.getArguments())
    if (func.getArgAttrOfType<StringAttr>(other.getArgNumber(),
                                          ParcDialect::kNameAttrName) == source)
      return other;
  return {};
}

func::FuncOp mlir::parc::findModelFunction(ModuleOp module, StringRef name) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  StringRef wanted = name.empty() ? StringRef("forward") : name;
  for (func::FuncOp func : funcs)
    if (func.getSymName() == wanted)
      return func;
  if (name.empty() && funcs.size() == 1)
    return funcs.front();
  return {};
}

SmallVector<std::string> mlir::parc::getResultNames(func::FuncOp func) {
  SmallVector<std::string> names;
  for (unsigned index = 0; index < func.getNumResults(); ++index) {
    auto name = func.getResultAttrOfType<StringAttr>(
        index, ParcDialect::kNameAttrName);
    names.push_back(name ? name.getValue().str()
                         : "result" + std::to_string(index));
  }
  return names;
}

SmallVector<Operation *> mlir::parc::getPlanPositionedOps(func::FuncOp func) {
  SmallVector<Operation *> ops;
  for (Operation &op : func.getBody().front())
    if (isa<ParcDialect>(op.getDialect()) && !op.hasAttr(kRecomputedAttrName))
      ops.push_back(&op);
  return ops;
}

llvm::DenseMap<int64_t, SmallVector<Operation *>>
mlir::parc::getRecomputedCopies(func::FuncOp func) {
  llvm::DenseMap<int64_t, SmallVector<Operation *>> copies;
  for (Operation &op : func.getBody().front())
    if (auto copied = op.getAttrOfType<IntegerAttr>(kRecomputedAttrName))
      copies[copied.getInt()].push_back(&op);
  return copies;
}

/// The layer part of a parameter name: up to and including its first
/// all-digit component; empty if it has none.
static StringRef getLayerName(StringRef name) {
  for (StringRef part : llvm::split(name, '.'))
    if (!part.empty() && llvm::all_of(part, llvm::isDigit))
      return name.take_front(part.end() - name.begin());
  return {};
}

LayerNumbering::LayerNumbering(func::FuncOp func) {
  for (unsigned index = 0; index < func.getNumArguments(); ++index)
    if (auto name = func.getArgAttrOfType<StringAttr>(
            index, ParcDialect::kNameAttrName))
      if (StringRef layer = getLayerName(name.getValue()); !layer.empty())
        layers.try_emplace(layer, layers.size());
}

std::optional<int64_t> LayerNumbering::lookup(StringRef name) const {
  auto it = layers.find(getLayerName(name));
  if (it == layers.end())
    return std::nullopt;
  return it->second;
}

std::set<int64_t> mlir::parc::getLayerIndices(func::FuncOp func) {
  std::set<int64_t> indices;
  for (int64_t layer = 0, end = LayerNumbering(func).size(); layer < end;
       ++layer)
    indices.insert(indices.end(), layer);
  return indices;
}

Phase mlir::parc::getPhase(Operation *op) {
  auto phase = op->getAttrOfType<StringAttr>(kPhaseAttrName);
  if (!phase)
    return Phase::Forward;
  return llvm::StringSwitch<Phase>(phase.getValue())
      .Case("backward", Phase::Backward)
      .Case("update", Phase::Update)
      .Default(Phase::Forward);
}

void mlir::parc::setPhase(Operation *op, Phase phase) {
  StringRef name = phase == Phase::Forward    ? "forward"
                   : phase == Phase::Backward ? "backward"
                                              : "update";
  op->setAttr(kPhaseAttrName, StringAttr::get(op->getContext(), name));
}

void mlir::parc::tagUntaggedOps(func::FuncOp func, Phase phase) {
  for (Operation &op : func.getBody().front().without_terminator())
    if (!op.hasAttr(kPhaseAttrName))
      setPhase(&op, phase);
}

func::FuncOp mlir::parc::getPrologue(func::FuncOp stageFunc) {
  auto module = stageFunc->getParentOfType<ModuleOp>();
  if (!module)
    return nullptr;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto of = func->getAttrOfType<FlatSymbolRefAttr>(kPrologueOfAttrName))
      if (of.getValue() == stageFunc.getSymName())
        return func;
  return nullptr;
}

FailureOr<SmallVector<func::FuncOp>>
mlir::parc::getStageFunctions(ModuleOp module) {
  SmallVector<func::FuncOp> stages;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kStageAttrName)) {
      if (!func->getAttrOfType<IntegerAttr>(kStageAttrName))
        return func.emitError("'") << kStageAttrName
                                   << "' must be an integer stage index";
      stages.push_back(func);
    }
  llvm::stable_sort(stages, [](func::FuncOp a, func::FuncOp b) {
    return a->getAttrOfType<IntegerAttr>(kStageAttrName).getInt() <
           b->getAttrOfType<IntegerAttr>(kStageAttrName).getInt();
  });
  // Tools index stages by position: they must be 0, 1, ... once each.
  for (auto [index, func] : llvm::enumerate(stages))
    if (func->getAttrOfType<IntegerAttr>(kStageAttrName).getInt() !=
        int64_t(index))
      return func.emitError("is stage ")
             << func->getAttrOfType<IntegerAttr>(kStageAttrName).getInt()
             << " but the module's stage functions must be numbered 0 to "
             << stages.size() - 1 << " once each";
  return stages;
}

StringAttr mlir::parc::getStageAxis(func::FuncOp stageFunc) {
  for (StringRef attrName :
       {StringRef(kPipelineAttrName), StringRef(kParameterServerAttrName)})
    if (auto dict = stageFunc->getAttrOfType<DictionaryAttr>(attrName))
      if (auto axis = dict.getAs<StringAttr>("axis"))
        return axis;
  return nullptr;
}

bool mlir::parc::isAveragedByLocalSgd(const ModelArgument &argument,
                                      bool averageOptimizerState) {
  return isa<FloatType>(argument.type.getElementType()) &&
         (argument.role == ArgumentRole::Param ||
          argument.role == ArgumentRole::Buffer ||
          (averageOptimizerState && argument.role == ArgumentRole::OptState));
}
