//===- Plan.cpp - plan.json as one data structure -------------------------===//

#include "parc/Plan/Plan.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::parc;
using json::Member;
using json::ObjectReader;
using json::Reader;
using json::Value;
using llvm::ArrayRef;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

// The spellings of the enums, indexed by their values.
constexpr StringRef kScheduleNames[] = {"gpipe", "1f1b", "interleaved-1f1b",
                                        "zb-h1", "pipedream-2bw"};
constexpr StringRef kRecomputeNames[] = {"none", "selective", "full"};
constexpr StringRef kPrecisionNames[] = {"f32", "bf16-mixed", "f16-mixed"};
constexpr StringRef kSyncNames[] = {"allreduce", "parameter-server",
                                    "local-sgd"};
constexpr StringRef kPlacementNames[] = {"colocated", "dedicated"};

// The keys of each object, in the order writePlan writes them.
constexpr StringRef kPlanKeys[] = {
    "mesh",  "shardings",     "sequence_parallel", "pipeline",
    "zero",  "recompute",     "recompute_layers",  "precision",
    "batch", "data_parallel", "predicted",         "planner"};
constexpr StringRef kPipelineKeys[] = {"axis", "microbatches", "schedule",
                                       "virtual_stages", "layers_per_stage"};
constexpr StringRef kBatchKeys[] = {"global", "micro"};
constexpr StringRef kDataParallelKeys[] = {"sync",
                                           "servers",
                                           "placement",
                                           "sync_every",
                                           "average_optimizer_state",
                                           "sync_batch_norm"};
constexpr StringRef kPredictedKeys[] = {"step_time_s",
                                        "tflops_per_gpu",
                                        "mfu",
                                        "peak_memory_bytes_per_rank",
                                        "comm_bytes_per_rank",
                                        "bubble_fraction",
                                        "memory"};
constexpr StringRef kMemoryKeys[] = {
    "parameters", "gradients", "optimizer_state", "activations", "temporaries"};
constexpr StringRef kPlannerKeys[] = {"cluster", "gpus", "buildable", "notes"};

/// Reads one plan; see readPlan.
class PlanReader {
public:
  explicit PlanReader(StringRef fileName) : reader(fileName) {}

  Expected<Plan> read(const Value &root);

private:
  Error readMesh(const Member &member);
  Error readShardings(const Value &value);
  Error readPipeline(const Value &value);
  Error readBatch(const Value &value);
  Error readDataParallel(const Value &value);
  Error readPredicted(const Value &value);
  Error readPlanner(const Value &value);
  /// Unless `axis` (at `value`) is a mesh axis, an error
  /// `WHAT must be a mesh axis (one of "dp", "tp"), not "pp"`.
  Error checkMeshAxis(const Value &value, const llvm::Twine &what);

  Reader reader;
  Plan plan;
};

} // namespace

Expected<Plan> PlanReader::read(const Value &root) {
  Expected<ObjectReader> top =
      ObjectReader::create(reader, root, "the plan", kPlanKeys);
  if (!top)
    return top.takeError();
  // The mesh first: the other parts name its axes.
  Expected<const Member *> mesh = top->require("mesh");
  if (!mesh)
    return mesh.takeError();
  if (Error error = readMesh(**mesh))
    return std::move(error);
  if (const Member *shardings = top->find("shardings"))
    if (Error error = readShardings(shardings->value))
      return std::move(error);
  if (const Member *member = top->find("sequence_parallel"))
    plan.locations.sequenceParallel = member->keyLocation;
  if (Error error = top->read("sequence_parallel", plan.sequenceParallel))
    return std::move(error);
  if (const Member *pipeline = top->find("pipeline")) {
    plan.locations.pipeline = pipeline->keyLocation;
    if (Error error = readPipeline(pipeline->value))
      return std::move(error);
  }
  if (const Member *member = top->find("zero"))
    plan.locations.zero = member->keyLocation;
  if (Error error = top->read("zero", plan.zero, 0, 3))
    return std::move(error);
  if (const Member *member = top->find("recompute"))
    plan.locations.recompute = member->keyLocation;
  if (Error error =
          top->readChoice("recompute", plan.recompute, kRecomputeNames))
    return std::move(error);
  if (const Member *member = top->find("recompute_layers"))
    plan.locations.recomputeLayers = member->keyLocation;
  if (Error error = top->read("recompute_layers", plan.recomputeLayers, 0))
    return std::move(error);
  if (const Member *member = top->find("precision"))
    plan.locations.precision = member->keyLocation;
  if (Error error =
          top->readChoice("precision", plan.precision, kPrecisionNames))
    return std::move(error);
  if (const Member *batch = top->find("batch"))
    if (Error error = readBatch(batch->value))
      return std::move(error);
  if (const Member *dataParallel = top->find("data_parallel")) {
    plan.locations.dataParallel = dataParallel->keyLocation;
    if (Error error = readDataParallel(dataParallel->value))
      return std::move(error);
  }
  if (const Member *predicted = top->find("predicted"))
    if (Error error = readPredicted(predicted->value))
      return std::move(error);
  if (const Member *planner = top->find("planner"))
    if (Error error = readPlanner(planner->value))
      return std::move(error);
  return std::move(plan);
}

Error PlanReader::readMesh(const Member &member) {
  const Value &value = member.value;
  plan.locations.mesh = member.keyLocation;
  if (!value.isObject())
    return reader.error(value.location,
                        "\"mesh\" must map axis names to sizes, e.g. "
                        "{\"dp\": 2, \"tp\": 2}, not " +
                            value.describe());
  if (value.members.empty())
    return reader.error(value.location, "\"mesh\" must have an axis");
  int64_t ranks = 1;
  for (const Member &axis : value.members) {
    if (axis.key.empty())
      return reader.error(axis.keyLocation, "a mesh axis needs a name");
    Expected<int64_t> size = reader.getInteger(
        axis.value, "mesh axis " + ObjectReader::quote(axis.key), 1);
    if (!size)
      return size.takeError();
    // ranks * size > 2^31, without overflowing.
    if (*size > kMaxPlanRanks / ranks)
      return reader.error(axis.value.location,
                          "the mesh has more than 2^31 ranks (" +
                              std::to_string(ranks) + " before axis " +
                              ObjectReader::quote(axis.key) + " of size " +
                              std::to_string(*size) + ")");
    ranks *= *size;
    plan.mesh.push_back({axis.key, *size, axis.keyLocation});
  }
  return Error::success();
}

Error PlanReader::checkMeshAxis(const Value &value, const llvm::Twine &what) {
  if (plan.getAxisSize(value.text))
    return Error::success();
  std::string axes;
  for (auto [index, axis] : llvm::enumerate(plan.mesh))
    axes += (index ? ", " : "") + ObjectReader::quote(axis.name);
  return reader.error(value.location, what + " must be a mesh axis (one of " +
                                          axes + "), not " + value.describe());
}

Error PlanReader::readShardings(const Value &value) {
  if (!value.isObject())
    return reader.error(value.location,
                        "\"shardings\" must map names to shardings, e.g. "
                        "{\"x\": [[\"dp\"], []]}, not " +
                            value.describe());
  for (const Member &member : value.members) {
    std::string what = ObjectReader::quote(member.key);
    Expected<ArrayRef<Value>> dims = reader.getArray(member.value, what);
    if (!dims)
      return dims.takeError();
    NamedSharding sharding{member.key, {}, member.keyLocation};
    for (auto [index, dim] : llvm::enumerate(*dims)) {
      std::string dimWhat = what + "[" + std::to_string(index) + "]";
      Expected<std::vector<std::string>> axes =
          reader.getStringArray(dim, dimWhat);
      if (!axes)
        return axes.takeError();
      for (auto [axisIndex, axis] : llvm::enumerate(dim.elements))
        if (Error error = checkMeshAxis(
                axis, dimWhat + "[" + std::to_string(axisIndex) + "]"))
          return error;
      sharding.dims.push_back(std::move(*axes));
    }
    plan.shardings.push_back(std::move(sharding));
  }
  return Error::success();
}

Error PlanReader::readPipeline(const Value &value) {
  Expected<ObjectReader> object =
      ObjectReader::create(reader, value, "\"pipeline\"", kPipelineKeys);
  if (!object)
    return object.takeError();
  PipelinePlan pipeline;
  Expected<const Member *> axis = object->require("axis");
  if (!axis)
    return axis.takeError();
  Expected<std::string> axisName = reader.getString((*axis)->value, "\"axis\"");
  if (!axisName)
    return axisName.takeError();
  if (Error error = checkMeshAxis((*axis)->value, "\"axis\""))
    return error;
  pipeline.axis = *axisName;
  if (Error error = object->read("microbatches", pipeline.microbatches, 1))
    return error;
  if (Error error =
          object->readChoice("schedule", pipeline.schedule, kScheduleNames))
    return error;
  if (Error error = object->read("virtual_stages", pipeline.virtualStages, 1))
    return error;
  if (Error error =
          object->read("layers_per_stage", pipeline.layersPerStage, 0))
    return error;
  plan.pipeline = std::move(pipeline);
  return Error::success();
}

Error PlanReader::readBatch(const Value &value) {
  Expected<ObjectReader> object =
      ObjectReader::create(reader, value, "\"batch\"", kBatchKeys);
  if (!object)
    return object.takeError();
  BatchPlan batch;
  if (Error error = object->read("global", batch.global, 1))
    return error;
  if (Error error = object->read("micro", batch.micro, 1))
    return error;
  plan.batch = batch;
  return Error::success();
}

Error PlanReader::readDataParallel(const Value &value) {
  Expected<ObjectReader> object = ObjectReader::create(
      reader, value, "\"data_parallel\"", kDataParallelKeys);
  if (!object)
    return object.takeError();
  DataParallelPlan dataParallel;
  if (Error error = object->readChoice("sync", dataParallel.sync, kSyncNames))
    return error;
  if (Error error = object->read("servers", dataParallel.servers, 1))
    return error;
  if (Error error = object->readChoice("placement", dataParallel.placement,
                                       kPlacementNames))
    return error;
  if (Error error = object->read("sync_every", dataParallel.syncEvery, 1))
    return error;
  if (Error error = object->read("average_optimizer_state",
                                 dataParallel.averageOptimizerState))
    return error;
  if (Error error = object->read("sync_batch_norm", dataParallel.syncBatchNorm))
    return error;
  plan.dataParallel = dataParallel;
  return Error::success();
}

Error PlanReader::readPredicted(const Value &value) {
  Expected<ObjectReader> object =
      ObjectReader::create(reader, value, "\"predicted\"", kPredictedKeys);
  if (!object)
    return object.takeError();
  constexpr Reader::Bound kBound = Reader::Bound::NonNegative;
  Prediction predicted;
  for (auto [key, field] : {
           std::pair{"step_time_s", &predicted.stepTimeS},
           std::pair{"tflops_per_gpu", &predicted.tflopsPerGpu},
           std::pair{"mfu", &predicted.mfu},
           std::pair{"peak_memory_bytes_per_rank",
                     &predicted.peakMemoryBytesPerRank},
           std::pair{"comm_bytes_per_rank", &predicted.commBytesPerRank},
           std::pair{"bubble_fraction", &predicted.bubbleFraction},
       })
    if (Error error = object->read(key, *field, kBound))
      return error;
  if (const Member *member = object->find("memory")) {
    Expected<ObjectReader> memoryObject =
        ObjectReader::create(reader, member->value, "\"memory\"", kMemoryKeys);
    if (!memoryObject)
      return memoryObject.takeError();
    MemoryPrediction memory;
    for (auto [key, field] : {
             std::pair{"parameters", &memory.parameters},
             std::pair{"gradients", &memory.gradients},
             std::pair{"optimizer_state", &memory.optimizerState},
             std::pair{"activations", &memory.activations},
             std::pair{"temporaries", &memory.temporaries},
         })
      if (Error error = memoryObject->read(key, *field, kBound))
        return error;
    predicted.memory = memory;
  }
  plan.predicted = predicted;
  return Error::success();
}

Error PlanReader::readPlanner(const Value &value) {
  Expected<ObjectReader> object =
      ObjectReader::create(reader, value, "\"planner\"", kPlannerKeys);
  if (!object)
    return object.takeError();
  PlannerInfo planner;
  if (Error error = object->read("cluster", planner.cluster))
    return error;
  if (Error error = object->read("gpus", planner.gpus, 1))
    return error;
  if (Error error = object->read("buildable", planner.buildable))
    return error;
  std::optional<std::vector<std::string>> notes;
  if (Error error = object->read("notes", notes))
    return error;
  if (notes)
    planner.notes = std::move(*notes);
  plan.planner = std::move(planner);
  return Error::success();
}

Expected<Plan> mlir::parc::readPlan(StringRef text, StringRef fileName) {
  Expected<Value> root = json::parse(text, fileName);
  if (!root)
    return root.takeError();
  return PlanReader(fileName).read(*root);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

StringRef mlir::parc::getPipelineScheduleName(PipelineSchedule schedule) {
  return kScheduleNames[static_cast<size_t>(schedule)];
}

std::optional<PipelineSchedule>
mlir::parc::parsePipelineScheduleName(StringRef name) {
  for (auto [index, spelling] : llvm::enumerate(kScheduleNames))
    if (spelling == name)
      return static_cast<PipelineSchedule>(index);
  return std::nullopt;
}

StringRef mlir::parc::getRecomputeName(Recompute recompute) {
  return kRecomputeNames[static_cast<size_t>(recompute)];
}

StringRef mlir::parc::getPrecisionName(Precision precision) {
  return kPrecisionNames[static_cast<size_t>(precision)];
}

StringRef mlir::parc::getDataParallelSyncName(DataParallelSync sync) {
  return kSyncNames[static_cast<size_t>(sync)];
}

StringRef mlir::parc::getServerPlacementName(ServerPlacement placement) {
  return kPlacementNames[static_cast<size_t>(placement)];
}

static Value makeIntegerArray(ArrayRef<int64_t> integers) {
  Value array = Value::makeArray();
  for (int64_t integer : integers)
    array.push(Value::makeInteger(integer));
  return array;
}

static Value makeStringArray(ArrayRef<std::string> strings) {
  Value array = Value::makeArray();
  for (const std::string &string : strings)
    array.push(Value::makeString(string));
  return array;
}

/// Adds `key` with the number when it is set.
static void addNumber(Value &object, StringRef key,
                      const std::optional<double> &number) {
  if (number)
    object.add(key, Value::makeNumber(*number));
}

static Value writePipeline(const PipelinePlan &pipeline) {
  Value object = Value::makeObject();
  object.add("axis", Value::makeString(pipeline.axis));
  if (pipeline.microbatches)
    object.add("microbatches", Value::makeInteger(*pipeline.microbatches));
  if (pipeline.schedule)
    object.add("schedule",
               Value::makeString(getPipelineScheduleName(*pipeline.schedule)));
  if (pipeline.virtualStages)
    object.add("virtual_stages", Value::makeInteger(*pipeline.virtualStages));
  if (pipeline.layersPerStage)
    object.add("layers_per_stage", makeIntegerArray(*pipeline.layersPerStage));
  return object;
}

static Value writePredicted(const Prediction &predicted) {
  Value object = Value::makeObject();
  addNumber(object, "step_time_s", predicted.stepTimeS);
  addNumber(object, "tflops_per_gpu", predicted.tflopsPerGpu);
  addNumber(object, "mfu", predicted.mfu);
  addNumber(object, "peak_memory_bytes_per_rank",
            predicted.peakMemoryBytesPerRank);
  addNumber(object, "comm_bytes_per_rank", predicted.commBytesPerRank);
  addNumber(object, "bubble_fraction", predicted.bubbleFraction);
  if (const std::optional<MemoryPrediction> &memory = predicted.memory) {
    Value memoryObject = Value::makeObject();
    addNumber(memoryObject, "parameters", memory->parameters);
    addNumber(memoryObject, "gradients", memory->gradients);
    addNumber(memoryObject, "optimizer_state", memory->optimizerState);
    addNumber(memoryObject, "activations", memory->activations);
    addNumber(memoryObject, "temporaries", memory->temporaries);
    object.add("memory", std::move(memoryObject));
  }
  return object;
}

static Value writePlanner(const PlannerInfo &planner) {
  Value object = Value::makeObject();
  if (planner.cluster)
    object.add("cluster", Value::makeString(*planner.cluster));
  if (planner.gpus)
    object.add("gpus", Value::makeInteger(*planner.gpus));
  if (planner.buildable)
    object.add("buildable", Value::makeBoolean(*planner.buildable));
  if (!planner.notes.empty())
    object.add("notes", makeStringArray(planner.notes));
  return object;
}

std::string mlir::parc::writePlan(const Plan &plan) {
  Value root = Value::makeObject();
  Value mesh = Value::makeObject();
  for (const MeshAxis &axis : plan.mesh)
    mesh.add(axis.name, Value::makeInteger(axis.size));
  root.add("mesh", std::move(mesh));
  if (!plan.shardings.empty()) {
    Value shardings = Value::makeObject();
    for (const NamedSharding &sharding : plan.shardings) {
      Value dims = Value::makeArray();
      for (const std::vector<std::string> &axes : sharding.dims)
        dims.push(makeStringArray(axes));
      shardings.add(sharding.name, std::move(dims));
    }
    root.add("shardings", std::move(shardings));
  }
  if (plan.sequenceParallel)
    root.add("sequence_parallel", Value::makeBoolean(*plan.sequenceParallel));
  if (plan.pipeline)
    root.add("pipeline", writePipeline(*plan.pipeline));
  if (plan.zero)
    root.add("zero", Value::makeInteger(*plan.zero));
  if (plan.recompute)
    root.add("recompute", Value::makeString(getRecomputeName(*plan.recompute)));
  if (plan.recomputeLayers)
    root.add("recompute_layers", makeIntegerArray(*plan.recomputeLayers));
  if (plan.precision)
    root.add("precision", Value::makeString(getPrecisionName(*plan.precision)));
  if (plan.batch) {
    Value batch = Value::makeObject();
    if (plan.batch->global)
      batch.add("global", Value::makeInteger(*plan.batch->global));
    if (plan.batch->micro)
      batch.add("micro", Value::makeInteger(*plan.batch->micro));
    root.add("batch", std::move(batch));
  }
  if (plan.dataParallel) {
    Value dataParallel = Value::makeObject();
    if (plan.dataParallel->sync)
      dataParallel.add("sync", Value::makeString(getDataParallelSyncName(
                                   *plan.dataParallel->sync)));
    if (plan.dataParallel->servers)
      dataParallel.add("servers",
                       Value::makeInteger(*plan.dataParallel->servers));
    if (plan.dataParallel->placement)
      dataParallel.add("placement", Value::makeString(getServerPlacementName(
                                        *plan.dataParallel->placement)));
    if (plan.dataParallel->syncEvery)
      dataParallel.add("sync_every",
                       Value::makeInteger(*plan.dataParallel->syncEvery));
    if (plan.dataParallel->averageOptimizerState)
      dataParallel.add(
          "average_optimizer_state",
          Value::makeBoolean(*plan.dataParallel->averageOptimizerState));
    if (plan.dataParallel->syncBatchNorm)
      dataParallel.add("sync_batch_norm",
                       Value::makeBoolean(*plan.dataParallel->syncBatchNorm));
    root.add("data_parallel", std::move(dataParallel));
  }
  if (plan.predicted)
    root.add("predicted", writePredicted(*plan.predicted));
  if (plan.planner)
    root.add("planner", writePlanner(*plan.planner));
  return json::print(root);
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

int64_t Plan::getNumRanks() const {
  int64_t ranks = 1;
  for (const MeshAxis &axis : mesh)
    ranks *= axis.size;
  return ranks;
}

std::optional<int64_t> Plan::getAxisSize(StringRef name) const {
  for (const MeshAxis &axis : mesh)
    if (axis.name == name)
      return axis.size;
  return std::nullopt;
}
