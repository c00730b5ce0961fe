//===- ProgramDescription.cpp - the JSON a rank program carries -----------===//

#include "ProgramDescription.h"

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/LocalSgd.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/StageMeshes.h"
#include "parc/Transforms/TensorSharding.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::parc;
using Json = nlohmann::ordered_json;

static std::optional<std::string> dtypeName(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF32())
    return "F32";
  if (element.isF16())
    return "F16";
  if (element.isBF16())
    return "BF16";
  if (element.isSignlessInteger(32))
    return "I32";
  if (element.isSignlessInteger(64))
    return "I64";
  return std::nullopt;
}

static Json axesJson(ArrayRef<StringAttr> axes) {
  Json list = Json::array();
  for (StringAttr axis : axes)
    list.push_back(axis.getValue().str());
  return list;
}

/// dtype, shapes, sharding and offset of one argument or result.
static FailureOr<Json> describeTensor(Value value, StringRef name,
                                      const TensorSharding &layout,
                                      dist::MeshOp mesh, Location loc) {
  auto type = cast<RankedTensorType>(value.getType());
  std::optional<std::string> dtype = dtypeName(type);
  std::optional<int64_t> offset = getArenaOffset(value);
  if (!dtype)
    return emitError(loc) << "'" << name << "' has element type "
                          << type.getElementType()
                          << ", which the runtime does not hold";
  if (!offset)
    return emitError(loc) << "'" << name
                          << "' has no arena offset; run --parc-plan-memory";
  Json tensor;
  tensor["name"] = name.str();
  tensor["dtype"] = *dtype;
  SmallVector<int64_t> global =
      mesh ? layout.getGlobalShape(type.getShape(), mesh)
           : SmallVector<int64_t>(type.getShape());
  tensor["global_shape"] = std::vector<int64_t>(global.begin(), global.end());
  tensor["local_shape"] =
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  Json dims = Json::array();
  for (const AxisList &axes : layout.dims)
    dims.push_back(axesJson(axes));
  tensor["sharding"] = dims;
  tensor["partial"] = axesJson(layout.partial);
  tensor["offset"] = *offset;
  return tensor;
}

static TensorSharding layoutOf(DictionaryAttr attrs, Type type) {
  if (auto sharding = attrs ? attrs.getAs<dist::ShardingAttr>(
                                  dist::DistDialect::kShardingAttrName)
                            : dist::ShardingAttr())
    return TensorSharding::fromAttr(sharding);
  return TensorSharding::replicated(cast<ShapedType>(type).getRank());
}

FailureOr<std::string> mlir::parc::describeProgram(func::FuncOp func,
                                                   dist::MeshOp mesh) {
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  Json program;
  program["version"] = 1;
  program["function"] = func.getSymName().str();
  Json meshJson;
  meshJson["axes"] = Json::array();
  meshJson["sizes"] = Json::array();
  if (mesh)
    for (auto [name, size] :
         llvm::zip_equal(mesh.getAxisNames().getAsValueRange<StringAttr>(),
                         mesh.getAxisSizes())) {
      meshJson["axes"].push_back(name.str());
      meshJson["sizes"].push_back(size);
    }
  program["mesh"] = meshJson;
  // A stage's program (a pipeline stage, the parameter servers' workers or
  // servers): the runtime checks each rank runs its own.
  if (auto stage = func->getAttrOfType<IntegerAttr>(kStageAttrName)) {
    StringAttr axis = getStageAxis(func);
    std::optional<int64_t> count =
        axis && mesh ? mesh.getAxisSize(axis.getValue()) : std::nullopt;
    if (!count)
      return func.emitError("is a stage but names no stage axis of its mesh "
                            "(dist.pipeline or dist.parameter_server)");
    Json stageJson;
    stageJson["axis"] = axis.getValue().str();
    stageJson["index"] = stage.getInt();
    stageJson["count"] = *count;
    // Stages on meshes of their own: every stage's, to find the peers.
    FailureOr<SmallVector<func::FuncOp>> stages =
        getStageFunctions(func->getParentOfType<ModuleOp>());
    if (failed(stages))
      return failure();
    FailureOr<::parc::StagedMeshes> meshes = getStagedMeshes(*stages);
    if (failed(meshes))
      return failure();
    for (size_t index = 0; index < meshes->getNumStages(); ++index)
      stageJson["meshes"].push_back(meshes->getMesh(index).getSizes());
    program["stage"] = stageJson;
  }
  // Local SGD: the runner averages the replicas between steps.
  FailureOr<std::optional<LocalSgdConfig>> localSgd = getLocalSgd(func);
  if (failed(localSgd))
    return failure();
  if (*localSgd) {
    Json localSgdJson;
    localSgdJson["axis"] = (*localSgd)->axis;
    localSgdJson["sync_every"] = (*localSgd)->syncEvery;
    localSgdJson["average_optimizer_state"] =
        (*localSgd)->averageOptimizerState;
    program["local_sgd"] = localSgdJson;
  }
  auto arena = func->getAttrOfType<IntegerAttr>(kArenaBytesAttrName);
  if (!arena)
    return func.emitError("has no memory plan; run --parc-plan-memory");
  program["arena_bytes"] = arena.getInt();

  program["arguments"] = Json::array();
  for (const ModelArgument &argument : *arguments) {
    Value value = func.getArgument(argument.index);
    FailureOr<Json> tensor = describeTensor(
        value, argument.name,
        layoutOf(func.getArgAttrDict(argument.index), value.getType()), mesh,
        value.getLoc());
    if (failed(tensor))
      return failure();
    (*tensor)["role"] = stringifyArgumentRole(argument.role).str();
    if (InitAttr init = argument.init) {
      Json spec;
      spec["distribution"] =
          stringifyInitDistribution(init.getDistribution()).str();
      spec["first"] = init.getFirst().convertToDouble();
      spec["second"] = init.getSecond().convertToDouble();
      (*tensor)["init"] = spec;
    } else {
      (*tensor)["init"] = nullptr;
    }
    if (argument.checkpointShape)
      (*tensor)["checkpoint_shape"] = std::vector<int64_t>(
          argument.checkpointShape->begin(), argument.checkpointShape->end());
    else
      (*tensor)["checkpoint_shape"] = nullptr;
    if (argument.initFrom)
      (*tensor)["init_from"] = *argument.initFrom;
    else
      (*tensor)["init_from"] = nullptr;
    program["arguments"].push_back(*tensor);
  }

  program["results"] = Json::array();
  Operation *terminator = func.getBody().front().getTerminator();
  for (auto [index, name] : llvm::enumerate(getResultNames(func))) {
    Value value = terminator->getOperand(index);
    FailureOr<Json> tensor = describeTensor(
        value, name,
        layoutOf(func.getResultAttrDict(index), value.getType()), mesh,
        terminator->getLoc());
    if (failed(tensor))
      return failure();
    program["results"].push_back(*tensor);
  }
  // Tensor names are checked UTF-8 (readModelArguments); other strings
  // (the function's symbol, axis names) are only shown, so a stray byte
  // there becomes U+FFFD instead of a JSON exception.
  return program.dump(-1, ' ', false, Json::error_handler_t::replace);
}
