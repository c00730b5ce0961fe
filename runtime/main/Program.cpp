//===- Program.cpp - reading the description a compiled program embeds ----===//

#include "main/Program.h"

#include "parcrt/Backend.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <unordered_map>

using namespace parcrt;
using json = nlohmann::json;

static int64_t product(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  return count;
}

int64_t BoundaryTensor::localElements() const { return product(localShape); }
int64_t BoundaryTensor::globalElements() const { return product(globalShape); }

int64_t Program::numRanks() const {
  return stage && !stage->meshes.empty() ? stage->meshes.getNumRanks()
                                         : product(axisSizes);
}

bool Program::isCarryResult(size_t index) const {
  return std::any_of(arguments.begin(), arguments.end(),
                     [&](const ProgramArgument &argument) {
                       return argument.role == ArgumentRole::Carry &&
                              argument.name == results[index].name;
                     });
}

/// "dp=2, tp=2" for `sizes` over `names`.
static std::string describeMesh(const std::vector<std::string> &names,
                                const std::vector<int64_t> &sizes) {
  std::string text;
  for (size_t axis = 0; axis < names.size(); ++axis)
    text +=
        (axis ? ", " : "") + names[axis] + "=" + std::to_string(sizes[axis]);
  return text.empty() ? "no axes" : text;
}

std::string Program::meshDescription() const {
  if (!stage || stage->meshes.empty())
    return describeMesh(axisNames, axisSizes);
  std::string text;
  for (size_t index = 0; index < stage->meshes.getNumStages(); ++index)
    text += (index ? "; stage " : "stage ") + std::to_string(index) + ": " +
            describeMesh(axisNames, stage->meshes.getMesh(index).getSizes()) +
            ", " + std::to_string(stage->meshes.getSliceSize(index)) + " ranks";
  return text;
}

std::string parcrt::typeString(const std::vector<int64_t> &shape,
                               parcrt_dtype dtype) {
  std::string text;
  for (int64_t size : shape)
    text += std::to_string(size) + "x";
  return text + dtypeName(dtype);
}

namespace {
/// Reads fields of the document without exceptions: the first problem is
/// kept in `error` (prefixed with the field's path) and later reads return
/// defaults.
class FieldReader {
public:
  explicit FieldReader(std::string *error) : error(error) {}

  bool ok() const { return !failed; }

  bool fail(const std::string &path, const std::string &message) {
    if (!failed && error)
      *error = "the embedded program description is invalid: " + path + ": " +
               message;
    failed = true;
    return false;
  }

  const json *field(const json &object, const std::string &path,
                    const char *key) {
    if (!object.is_object())
      return fail(path, "expected an object"), nullptr;
    auto it = object.find(key);
    if (it == object.end())
      return fail(path + "." + key, "missing"), nullptr;
    return &*it;
  }

  int64_t integer(const json &value, const std::string &path) {
    if (!value.is_number_integer())
      return fail(path, "expected an integer"), 0;
    return value.get<int64_t>();
  }

  std::string string(const json &value, const std::string &path) {
    if (!value.is_string())
      return fail(path, "expected a string"), "";
    return value.get<std::string>();
  }

  bool boolean(const json &value, const std::string &path) {
    if (!value.is_boolean())
      return fail(path, "expected true or false"), false;
    return value.get<bool>();
  }
  double number(const json &value, const std::string &path) {
    if (!value.is_number())
      return fail(path, "expected a number"), 0.0;
    return value.get<double>();
  }

  std::vector<int64_t> shape(const json &value, const std::string &path) {
    std::vector<int64_t> sizes;
    if (!value.is_array())
      return fail(path, "expected an array of sizes"), sizes;
    for (size_t i = 0; i < value.size(); ++i) {
      int64_t size = integer(value[i], path + "[" + std::to_string(i) + "]");
      if (size < 0)
        fail(path, "negative size");
      sizes.push_back(size);
    }
    if (sizes.size() > PARCRT_MAX_RANK)
      fail(path,
           "rank " + std::to_string(sizes.size()) + " exceeds PARCRT_MAX_RANK");
    return sizes;
  }

  /// Mesh axis names to positions; no axis may appear twice in one list.
  std::vector<int> axes(const json &value, const std::string &path,
                        const std::vector<std::string> &mesh) {
    std::vector<int> positions;
    if (!value.is_array())
      return fail(path, "expected an array of mesh axis names"), positions;
    for (size_t i = 0; i < value.size(); ++i) {
      std::string name = string(value[i], path + "[" + std::to_string(i) + "]");
      auto it = std::find(mesh.begin(), mesh.end(), name);
      if (it == mesh.end()) {
        fail(path, "'" + name + "' is not an axis of the mesh");
        continue;
      }
      positions.push_back(static_cast<int>(it - mesh.begin()));
    }
    return positions;
  }

private:
  std::string *error;
  bool failed = false;
};

std::optional<parcrt_dtype> parseDtype(const std::string &name) {
  if (name == "F32")
    return PARCRT_F32;
  if (name == "F16")
    return PARCRT_F16;
  if (name == "BF16")
    return PARCRT_BF16;
  if (name == "I32")
    return PARCRT_I32;
  if (name == "I64")
    return PARCRT_I64;
  return std::nullopt;
}
} // namespace

/// Reads the fields arguments and results share and checks that the local
/// shape is the global one split by the sharding and that the tensor lies in
/// the arena.
static void readBoundary(FieldReader &reader, const json &entry,
                         const std::string &path, const Program &program,
                         BoundaryTensor &tensor) {
  if (const json *name = reader.field(entry, path, "name"))
    tensor.name = reader.string(*name, path + ".name");
  if (const json *dtype = reader.field(entry, path, "dtype")) {
    std::optional<parcrt_dtype> parsed =
        parseDtype(reader.string(*dtype, path + ".dtype"));
    if (!parsed)
      reader.fail(path + ".dtype", "expected F32, F16, BF16, I32 or I64");
    tensor.dtype = parsed.value_or(PARCRT_F32);
  }
  if (const json *shape = reader.field(entry, path, "global_shape"))
    tensor.globalShape = reader.shape(*shape, path + ".global_shape");
  if (const json *shape = reader.field(entry, path, "local_shape"))
    tensor.localShape = reader.shape(*shape, path + ".local_shape");
  if (const json *sharding = reader.field(entry, path, "sharding")) {
    if (!sharding->is_array())
      reader.fail(path + ".sharding", "expected one array of axes per "
                                      "dimension");
    else
      for (size_t dim = 0; dim < sharding->size(); ++dim)
        tensor.sharding.push_back(reader.axes(
            (*sharding)[dim], path + ".sharding[" + std::to_string(dim) + "]",
            program.axisNames));
  }
  if (const json *offset = reader.field(entry, path, "offset"))
    tensor.offset = reader.integer(*offset, path + ".offset");
  if (!reader.ok())
    return;

  if (tensor.localShape.size() != tensor.globalShape.size() ||
      tensor.sharding.size() != tensor.globalShape.size()) {
    reader.fail(path, "global_shape, local_shape and sharding must have one "
                      "entry per dimension");
    return;
  }
  std::vector<bool> used(program.axisNames.size(), false);
  for (size_t dim = 0; dim < tensor.sharding.size(); ++dim) {
    int64_t parts = 1;
    for (int axis : tensor.sharding[dim]) {
      if (used[axis])
        reader.fail(path + ".sharding", "axis '" + program.axisNames[axis] +
                                            "' splits more than once");
      used[axis] = true;
      parts *= program.axisSizes[axis];
    }
    if (tensor.localShape[dim] * parts != tensor.globalShape[dim])
      reader.fail(
          path, "dimension " + std::to_string(dim) + " has local size " +
                    std::to_string(tensor.localShape[dim]) + ", which split " +
                    std::to_string(parts) + " ways does not make global size " +
                    std::to_string(tensor.globalShape[dim]));
  }
  int64_t bytes = tensor.localElements() * dtypeBytes(tensor.dtype);
  if (tensor.offset < 0 || tensor.offset + bytes > program.arenaBytes)
    reader.fail(path, "bytes [" + std::to_string(tensor.offset) + ", " +
                          std::to_string(tensor.offset + bytes) +
                          ") lie outside the arena of " +
                          std::to_string(program.arenaBytes) + " bytes");
}

static void readArgument(FieldReader &reader, const json &entry,
                         const std::string &path, const Program &program,
                         ProgramArgument &argument) {
  readBoundary(reader, entry, path, program, argument);
  if (const json *role = reader.field(entry, path, "role")) {
    std::string name = reader.string(*role, path + ".role");
    if (name == "input")
      argument.role = ArgumentRole::Input;
    else if (name == "param")
      argument.role = ArgumentRole::Param;
    else if (name == "label")
      argument.role = ArgumentRole::Label;
    else if (name == "optstate")
      argument.role = ArgumentRole::OptState;
    else if (name == "buffer")
      argument.role = ArgumentRole::Buffer;
    else if (name == "carry")
      argument.role = ArgumentRole::Carry;
    else
      reader.fail(path + ".role",
                  "expected input, param, label, optstate, buffer or carry");
  }
  auto init = entry.find("init");
  if (init != entry.end() && !init->is_null()) {
    std::string initPath = path + ".init";
    InitSpec spec{InitDistribution::Normal, 0.0, 0.0};
    if (const json *distribution =
            reader.field(*init, initPath, "distribution")) {
      std::string name =
          reader.string(*distribution, initPath + ".distribution");
      if (name == "normal")
        spec.distribution = InitDistribution::Normal;
      else if (name == "uniform")
        spec.distribution = InitDistribution::Uniform;
      else if (name == "constant")
        spec.distribution = InitDistribution::Constant;
      else
        reader.fail(initPath + ".distribution",
                    "expected normal, uniform or constant");
    }
    if (const json *first = reader.field(*init, initPath, "first"))
      spec.first = reader.number(*first, initPath + ".first");
    if (const json *second = reader.field(*init, initPath, "second"))
      spec.second = reader.number(*second, initPath + ".second");
    argument.init = spec;
  }
  auto checkpoint = entry.find("checkpoint_shape");
  if (checkpoint != entry.end() && !checkpoint->is_null()) {
    argument.checkpointShape =
        reader.shape(*checkpoint, path + ".checkpoint_shape");
    if (reader.ok() &&
        product(*argument.checkpointShape) != argument.globalElements())
      reader.fail(path + ".checkpoint_shape",
                  "holds a different number of elements than global_shape");
  }
  auto initFrom = entry.find("init_from");
  if (initFrom != entry.end() && !initFrom->is_null()) {
    argument.initFrom = reader.string(*initFrom, path + ".init_from");
    if (reader.ok() && argument.initFrom.empty())
      reader.fail(path + ".init_from", "is empty");
  }
}

InitSpec ProgramArgument::getStartingInit() const {
  if (init)
    return *init;
  return role == ArgumentRole::Param
             ? InitSpec{InitDistribution::Normal, 0.0, 0.02}
             : InitSpec{InitDistribution::Normal, 0.0, 1.0};
}

/// Reads "local_sgd": its axis must be the mesh's.
static void readLocalSgd(FieldReader &reader, const json &entry,
                         Program &program) {
  LocalSgd localSgd;
  std::string axisName;
  if (const json *axis = reader.field(entry, "local_sgd", "axis"))
    axisName = reader.string(*axis, "local_sgd.axis");
  if (const json *every = reader.field(entry, "local_sgd", "sync_every"))
    localSgd.syncEvery = reader.integer(*every, "local_sgd.sync_every");
  if (const json *state =
          reader.field(entry, "local_sgd", "average_optimizer_state"))
    localSgd.averageOptimizerState =
        reader.boolean(*state, "local_sgd.average_optimizer_state");
  if (!reader.ok())
    return;
  auto it =
      std::find(program.axisNames.begin(), program.axisNames.end(), axisName);
  if (it == program.axisNames.end()) {
    reader.fail("local_sgd.axis",
                "'" + axisName + "' is not an axis of the mesh");
    return;
  }
  if (localSgd.syncEvery < 1) {
    reader.fail("local_sgd.sync_every", "expected at least 1");
    return;
  }
  localSgd.axis = static_cast<int>(it - program.axisNames.begin());
  program.localSgd = localSgd;
}

/// Reads "stage.meshes": one mesh per stage, with the program's axes, the
/// stage axis first, and the program's own mesh for its stage.
static void readStageMeshes(FieldReader &reader, const json &value,
                            const Program &program, PipelineStage &stage) {
  if (!value.is_array() || static_cast<int64_t>(value.size()) != stage.count)
    return (void)reader.fail("stage.meshes",
                             "expected an array of one mesh per stage");
  if (stage.axis != 0)
    return (void)reader.fail("stage.meshes",
                             "the stage axis must be the first");
  std::vector<parc::MeshShape> meshes;
  for (size_t index = 0; index < value.size(); ++index) {
    std::string path = "stage.meshes[" + std::to_string(index) + "]";
    std::vector<int64_t> sizes = reader.shape(value[index], path);
    if (!reader.ok())
      return;
    if (sizes.size() != program.axisSizes.size() || sizes[0] != stage.count)
      return (void)reader.fail(path, "expected the program's axes, with " +
                                         std::to_string(stage.count) +
                                         " stages first");
    int64_t ranks = 1;
    for (int64_t size : sizes)
      if (size < 1 || __builtin_mul_overflow(ranks, size, &ranks))
        return (void)reader.fail(path, "sizes must be positive and their "
                                       "product fit in int64");
    if (static_cast<int64_t>(index) == stage.index &&
        sizes != program.axisSizes)
      return (void)reader.fail(path, "differs from the program's mesh");
    meshes.emplace_back(std::move(sizes));
  }
  stage.meshes = parc::StagedMeshes(std::move(meshes));
  if (stage.meshes.getNumRanks() > std::numeric_limits<int>::max())
    reader.fail("stage.meshes", "more ranks than MPI numbers");
}

/// Reads "stage" and checks it against the mesh: the stage axis is the
/// pipeline's, so no tensor of the stage may be split or summed over it.
static void readStage(FieldReader &reader, const json &entry,
                      Program &program) {
  PipelineStage stage;
  std::string axisName;
  if (const json *axis = reader.field(entry, "stage", "axis"))
    axisName = reader.string(*axis, "stage.axis");
  if (const json *index = reader.field(entry, "stage", "index"))
    stage.index = reader.integer(*index, "stage.index");
  if (const json *count = reader.field(entry, "stage", "count"))
    stage.count = reader.integer(*count, "stage.count");
  if (!reader.ok())
    return;
  auto it =
      std::find(program.axisNames.begin(), program.axisNames.end(), axisName);
  if (it == program.axisNames.end()) {
    reader.fail("stage.axis", "'" + axisName + "' is not an axis of the mesh");
    return;
  }
  stage.axis = static_cast<int>(it - program.axisNames.begin());
  if (stage.count != program.axisSizes[stage.axis])
    reader.fail("stage.count",
                "is " + std::to_string(stage.count) + ", but mesh axis '" +
                    axisName + "' has size " +
                    std::to_string(program.axisSizes[stage.axis]));
  if (stage.index < 0 || stage.index >= stage.count)
    reader.fail("stage.index",
                "expected 0 to " + std::to_string(stage.count - 1));
  if (auto meshes = entry.find("meshes"); reader.ok() && meshes != entry.end())
    readStageMeshes(reader, *meshes, program, stage);
  auto usesAxis = [&](const BoundaryTensor &tensor) {
    for (const std::vector<int> &axes : tensor.sharding)
      if (std::count(axes.begin(), axes.end(), stage.axis))
        return true;
    return std::count(tensor.partial.begin(), tensor.partial.end(),
                      stage.axis) > 0;
  };
  for (size_t i = 0; i < program.arguments.size(); ++i)
    if (usesAxis(program.arguments[i]))
      reader.fail("arguments[" + std::to_string(i) + "]",
                  "is split over the stage axis '" + axisName + "'");
  for (size_t i = 0; i < program.results.size(); ++i)
    if (usesAxis(program.results[i]))
      reader.fail("results[" + std::to_string(i) + "]",
                  "is split or summed over the stage axis '" + axisName + "'");
  program.stage = stage;
}

std::optional<Program> parcrt::parseProgram(const char *text,
                                            std::string *error) {
  json document = json::parse(text, nullptr, /*allow_exceptions=*/false);
  FieldReader reader(error);
  if (document.is_discarded()) {
    reader.fail("document", "not valid JSON");
    return std::nullopt;
  }
  Program program;
  if (const json *version = reader.field(document, "document", "version"))
    if (reader.integer(*version, "version") != 1 && reader.ok())
      reader.fail("version", "this runtime reads version 1");
  if (const json *function = reader.field(document, "document", "function"))
    program.function = reader.string(*function, "function");
  if (const json *mesh = reader.field(document, "document", "mesh")) {
    if (const json *axes = reader.field(*mesh, "mesh", "axes")) {
      if (!axes->is_array())
        reader.fail("mesh.axes", "expected an array of names");
      else
        for (size_t i = 0; i < axes->size(); ++i)
          program.axisNames.push_back(reader.string(
              (*axes)[i], "mesh.axes[" + std::to_string(i) + "]"));
    }
    if (const json *sizes = reader.field(*mesh, "mesh", "sizes"))
      program.axisSizes = reader.shape(*sizes, "mesh.sizes");
  }
  if (!reader.ok())
    return std::nullopt;
  if (program.axisNames.size() != program.axisSizes.size())
    reader.fail("mesh", "axes and sizes differ in length");
  for (size_t axis = 0; axis < program.axisNames.size(); ++axis) {
    if (program.axisSizes[axis] < 1)
      reader.fail("mesh.sizes", "axis sizes must be at least 1");
    if (std::count(program.axisNames.begin(), program.axisNames.end(),
                   program.axisNames[axis]) > 1)
      reader.fail("mesh.axes",
                  "'" + program.axisNames[axis] + "' appears more than once");
  }
  if (const json *arena = reader.field(document, "document", "arena_bytes"))
    program.arenaBytes = reader.integer(*arena, "arena_bytes");
  if (!reader.ok())
    return std::nullopt;

  if (const json *arguments = reader.field(document, "document", "arguments")) {
    if (!arguments->is_array())
      reader.fail("arguments", "expected an array");
    else
      for (size_t i = 0; i < arguments->size() && reader.ok(); ++i)
        readArgument(reader, (*arguments)[i],
                     "arguments[" + std::to_string(i) + "]", program,
                     program.arguments.emplace_back());
    // A copy's global elements are its source's, element for element.
    auto stageEntry = document.find("stage");
    bool isStage = stageEntry != document.end() && !stageEntry->is_null();
    std::unordered_map<std::string, const ProgramArgument *> sources;
    for (const ProgramArgument &argument : program.arguments)
      if (argument.initFrom.empty())
        sources.emplace(argument.name, &argument);
    for (size_t i = 0; i < program.arguments.size() && reader.ok(); ++i) {
      ProgramArgument &argument = program.arguments[i];
      if (argument.initFrom.empty())
        continue;
      auto source = sources.find(argument.initFrom);
      std::string path = "arguments[" + std::to_string(i) + "].init_from";
      // Another stage's argument (a dedicated server's master copies the
      // workers' parameter): the copy carries its init.
      if (source == sources.end() && isStage && argument.init)
        continue;
      if (source == sources.end())
        reader.fail(path, "names no argument that starts on its own");
      else if (source->second->globalShape != argument.globalShape)
        reader.fail(path, "names an argument of another global shape");
      else
        argument.init = source->second->getStartingInit();
    }
  }
  if (const json *results = reader.field(document, "document", "results")) {
    if (!results->is_array())
      reader.fail("results", "expected an array");
    for (size_t i = 0;
         results->is_array() && i < results->size() && reader.ok(); ++i) {
      std::string path = "results[" + std::to_string(i) + "]";
      BoundaryTensor &result = program.results.emplace_back();
      readBoundary(reader, (*results)[i], path, program, result);
      // No pending sum unless "partial" names axes.
      auto partial = (*results)[i].find("partial");
      if (reader.ok() && partial != (*results)[i].end() && !partial->is_null())
        result.partial =
            reader.axes(*partial, path + ".partial", program.axisNames);
    }
  }
  auto stage = document.find("stage");
  if (reader.ok() && stage != document.end() && !stage->is_null())
    readStage(reader, *stage, program);
  auto localSgd = document.find("local_sgd");
  if (reader.ok() && localSgd != document.end() && !localSgd->is_null())
    readLocalSgd(reader, *localSgd, program);
  if (!reader.ok())
    return std::nullopt;
  return program;
}
