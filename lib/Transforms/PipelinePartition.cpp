//===- PipelinePartition.cpp - a partitioned program as pipeline stages ---===//
//
// The input is the partitioned program of one micro-batch on a mesh with a
// `microbatch` axis. Every value gets a stage (or none: arguments outside
// layers and what is computed from them alone are materialized where
// needed) and is either one per micro-batch or invariant. Each stage is then
// emitted as a static sequence: invariant ops, the schedule's units, the
// ops after the sum over micro-batches, with a send after each value another
// stage needs and a receive before its first use there.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/Pipeline.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcAttrs.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/Recompute.h"
#include "parc/Transforms/StaleWeights.h"
#include "parc/Transforms/TensorSharding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

#include <map>
#include <set>

namespace mlir::parc {
#define GEN_PASS_DEF_PIPELINEPARTITIONPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

constexpr int64_t kNoStage = -1;
/// The copy key of a value that does not vary per micro-batch: as in this
/// step, or (derived from stale weights) as in the next step, whose
/// micro-batches read the newest weights (PipeDream-2BW).
constexpr int64_t kInvariant = -1;
constexpr int64_t kNextStepInvariant = -2;
/// MPI guarantees tags up to 32767 only.
constexpr int64_t kMaxChannels = 32768;

struct PipelineConfig {
  StringAttr axis, microbatchAxis;
  int64_t stages = 1, microbatches = 1, virtualStages = 1;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  std::optional<SmallVector<int64_t>> layersPerStage;
};

/// Where a value of the one-micro-batch program lives and how it varies.
struct ValueInfo {
  /// The model chunk (the stage without interleaving) that computes it;
  /// kNoStage: materialized on every stage that needs it.
  int64_t stage = kNoStage;
  bool perMicrobatch = false;
  /// Depends on a sum over micro-batches, or only such values read it:
  /// computed after the last one.
  bool afterSum = false;
  /// Computed from layer parameters (and constants), not from inputs.
  bool fromParameters = false;
  /// Depends on an input or label (an activation or its gradient).
  bool fromInputs = false;
  /// Depends on a stale weight version (PipeDream-2BW).
  bool fromStale = false;
  Phase phase = Phase::Forward;
  /// The first channel of its messages; -1 when no other stage needs it.
  int64_t channel = -1;
};

/// The axes of a collective without the micro-batch axis, and whether it
/// had it.
struct SplitAxes {
  SmallVector<Attribute> rest;
  bool overMicrobatches = false;
};

class PipelinePartitioner {
public:
  PipelinePartitioner(func::FuncOp func, dist::MeshOp mesh,
                      PipelineConfig config)
      : func(func), mesh(mesh), config(std::move(config)),
        body(func.getBody().front()) {}

  /// Builds the stage functions in front of `func`; the caller erases it.
  FailureOr<SmallVector<func::FuncOp>> run();

private:
  void sumPartsSeparately();
  LogicalResult assignLayerStages();
  /// The layers of each stage that balance the stages' FLOPs; none with
  /// interleaving (chunks are even) or fewer layers than stages.
  std::optional<SmallVector<int64_t>>
  balanceLayers(const std::set<int64_t> &layers);
  LogicalResult assignStagesByCost();
  LogicalResult analyzeArguments();
  LogicalResult analyzeOp(Operation &op);
  void deferUpdateOnlyValues();
  void computeNeeds();
  LogicalResult assignChannels();
  FailureOr<func::FuncOp> emitStage(int64_t stage);
  /// An empty function for stage `stage` named after `func` with `suffix`,
  /// taking the arguments the stage needs (returned in `taken`).
  func::FuncOp createStageFunction(int64_t stage, StringRef suffix,
                                   SmallVectorImpl<BlockArgument> &taken);
  /// The attributes of a `carry` argument or result.
  DictionaryAttr getCarryAttrs(StringRef name, RankedTensorType type,
                               bool argument);

  SplitAxes splitAxes(Operation *op) const;
  /// The stage that runs model chunk `chunk`.
  int64_t stageOf(int64_t chunk) const { return chunk % config.stages; }
  bool isAsynchronous() const {
    return config.schedule == PipelineSchedule::PipeDream2BW;
  }
  /// The forwards of stage `stage` that run before its first backward.
  int64_t getWarmup(int64_t stage) const {
    return std::min(config.stages - stage - 1, config.microbatches);
  }
  /// PipeDream-2BW gives micro-batch j of the next step the index
  /// microbatches + j; it has channels of its own.
  bool isNextStep(int64_t microbatch) const {
    return microbatch >= config.microbatches ||
           microbatch == kNextStepInvariant;
  }
  int64_t getChannelsPerValue() const {
    return config.microbatches + (isAsynchronous() ? config.stages : 0);
  }
  /// The values (and micro-batches) a stage of an asynchronous pipeline
  /// receives at the end of a step for the forwards it runs in the next:
  /// those an earlier stage computes in its warm-up, which runs a step
  /// ahead of this stage's.
  SmallVector<std::pair<Value, int64_t>> getCarriedReceives(int64_t stage);
  FailureOr<func::FuncOp>
  emitPrologue(int64_t stage, func::FuncOp stageFunc,
               ArrayRef<std::pair<Value, int64_t>> carried);
  int64_t getNumChunks() const {
    return config.stages * config.virtualStages;
  }
  /// A sharding without the micro-batch axis, and the dimension it split.
  std::pair<dist::ShardingAttr, std::optional<unsigned>>
  withoutMicrobatches(dist::ShardingAttr sharding) const;

  func::FuncOp func;
  dist::MeshOp mesh;
  PipelineConfig config;
  Block &body;
  llvm::DenseMap<Value, ValueInfo> info;
  /// The stages each value is used on (its own included).
  llvm::DenseMap<Value, llvm::BitVector> needs;
  SmallVector<llvm::BitVector> resultStages;
  /// The sums over micro-batches each value feeds.
  llvm::DenseMap<Value, SmallVector<Operation *>> sumsOf;
  /// Without layers: the stage of each forward op on the inputs' path, by
  /// the FLOPs before it.
  llvm::DenseMap<Operation *, int64_t> stageByCost;
  /// PipeDream-2BW: each stale weight version's newest version.
  llvm::DenseMap<Value, BlockArgument> newestOf;
  bool hasBackward = false;

  friend class StageEmitter;
};

/// Emits one stage's function.
class StageEmitter {
public:
  StageEmitter(PipelinePartitioner &p, int64_t stage, func::FuncOp stageFunc)
      : p(p), stage(stage), builder(stageFunc.getContext()) {
    builder.setInsertionPointToEnd(&stageFunc.getBody().front());
  }

  /// Emits `op` for micro-batch `microbatch` (kInvariant, or
  /// kNextStepInvariant: an invariant op).
  LogicalResult emit(Operation *op, int64_t microbatch);
  /// This stage's copy of `value` for `microbatch`.
  FailureOr<Value> get(Value value, int64_t microbatch);
  /// The value a result of the stage returns (micro-batches joined).
  FailureOr<Value> getResult(Value value, unsigned resultIndex);
  /// Turns the ops after `before` up to `last`, which the previous step ran
  /// (PipeDream-2BW), into `carry` arguments of `stageFunc`: each value of
  /// theirs a later op reads; appends its (value, micro-batch) to `carried`.
  /// The invariants they made and their slices of inputs stay.
  LogicalResult carryOver(func::FuncOp stageFunc, Operation *before,
                          Operation *last,
                          SmallVectorImpl<std::pair<Value, int64_t>> &carried);
  /// Returns, as the `carry` results of `stageFunc`, the next step's copies
  /// of `carried`.
  LogicalResult returnCarried(func::FuncOp stageFunc,
                              ArrayRef<std::pair<Value, int64_t>> carried);

  llvm::DenseMap<BlockArgument, Value> arguments;
  /// This stage's copies by (value, micro-batch or invariant key).
  std::map<std::pair<void *, int64_t>, Value> copies;

private:
  /// The key `value`'s copy for `microbatch` has in `copies`.
  int64_t getCopyIndex(Value value, int64_t microbatch) const;
  LogicalResult emitSumOverMicrobatches(Operation *op);
  /// The micro-batches' copies of `value` joined along `dim`.
  FailureOr<Value> joinMicrobatches(Value value, unsigned dim, Location loc);
  void produced(Value value, Value copy, int64_t microbatch);
  Value sliceMicrobatch(Value whole, unsigned dim, int64_t microbatch);

  PipelinePartitioner &p;
  int64_t stage;
  OpBuilder builder;
  /// Running sums over micro-batches, by the collective that sums.
  llvm::DenseMap<Operation *, Value> sums;
};

} // namespace

//===----------------------------------------------------------------------===//
// Analysis
//===----------------------------------------------------------------------===//

std::optional<SmallVector<int64_t>>
PipelinePartitioner::balanceLayers(const std::set<int64_t> &layers) {
  if (config.virtualStages > 1 || int64_t(layers.size()) < config.stages)
    return std::nullopt;
  // Forward FLOPs per layer (the backward's are about twice as many, alike);
  // ops outside every layer before the first (the embedding) weigh on the
  // first stage, after it (the head, the loss) on the last.
  llvm::DenseMap<int64_t, unsigned> position;
  for (int64_t layer : layers)
    position.try_emplace(layer, position.size());
  SmallVector<double> costs(layers.size(), 0);
  double first = 0, last = 0;
  bool inLayers = false;
  llvm::DenseMap<Operation *, int64_t> layerOf = getForwardLayers(func);
  for (Operation &op : body.without_terminator()) {
    auto it = layerOf.find(&op);
    if (it == layerOf.end())
      continue;
    auto counted = dyn_cast<FlopCountOpInterface>(op);
    double flops = counted ? double(counted.getFlopCount()) : 0;
    if (auto layer = position.find(it->second); layer != position.end()) {
      costs[layer->second] += flops;
      inLayers = true;
    } else {
      (inLayers ? last : first) += flops;
    }
  }
  return balanceLayersPerStage(costs, first, last, config.stages);
}

LogicalResult PipelinePartitioner::assignLayerStages() {
  std::set<int64_t> layers = getLayerIndices(func);
  std::optional<SmallVector<int64_t>> given = config.layersPerStage;
  if (!given)
    given = balanceLayers(layers);
  llvm::Expected<SmallVector<int64_t>> perStage =
      getLayersPerStage(getNumChunks(), layers.size(), given);
  if (!perStage)
    return func.emitError(llvm::toString(perStage.takeError()));
  int64_t chunks = getNumChunks();
  if (perStage->empty())
    return assignStagesByCost();
  // Layer indices in order, whatever their numbering.
  auto layer = layers.begin();
  llvm::DenseMap<int64_t, int64_t> byIndex;
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t i = 0; i < (*perStage)[c]; ++i, ++layer)
      byIndex[*layer] = c;
  LayerNumbering numbering(func);
  for (BlockArgument argument : body.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), ParcDialect::kNameAttrName))
      if (std::optional<int64_t> index = numbering.lookup(name.getValue())) {
        ValueInfo &value = info[argument];
        value.stage = byIndex.lookup(*index);
        value.fromParameters = true;
      }
  return success();
}

// A model without layers: its forward ops on the inputs' path go to stages
// in program order, each stage taking an equal share of their FLOPs.
LogicalResult PipelinePartitioner::assignStagesByCost() {
  llvm::DenseSet<Value> fromInputs;
  for (BlockArgument argument : body.getArguments()) {
    auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kRoleAttrName);
    if (role && (role.getValue() == "input" || role.getValue() == "label"))
      fromInputs.insert(argument);
  }
  SmallVector<std::pair<Operation *, int64_t>> path;
  int64_t total = 0;
  for (Operation &op : body.without_terminator()) {
    if (op.hasAttr(kPhaseAttrName) && getPhase(&op) != Phase::Forward)
      continue;
    if (llvm::none_of(op.getOperands(),
                      [&](Value v) { return fromInputs.contains(v); }))
      continue;
    for (Value result : op.getResults())
      fromInputs.insert(result);
    auto counted = dyn_cast<FlopCountOpInterface>(op);
    int64_t flops = counted ? counted.getFlopCount() : 0;
    path.push_back({&op, flops});
    total += flops;
  }
  if (total == 0)
    return func.emitError("the model has no layers (parameters named like "
                          "'h.<i>.…') and no FLOPs to split into stages");
  // An op's stage is where the middle of its FLOPs falls.
  int64_t before = 0;
  for (auto [op, flops] : path) {
    double middle = before + flops / 2.0;
    stageByCost[op] = std::min<int64_t>(
        getNumChunks() - 1, int64_t(middle * getNumChunks() / total));
    before += flops;
  }
  return success();
}

std::pair<dist::ShardingAttr, std::optional<unsigned>>
PipelinePartitioner::withoutMicrobatches(dist::ShardingAttr sharding) const {
  if (!sharding)
    return {sharding, std::nullopt};
  MLIRContext *context = sharding.getContext();
  std::optional<unsigned> split;
  SmallVector<Attribute> dims;
  for (auto [index, dim] : llvm::enumerate(sharding.getDims())) {
    SmallVector<Attribute> axes;
    for (Attribute axis : cast<ArrayAttr>(dim))
      if (axis == config.microbatchAxis)
        split = index;
      else
        axes.push_back(axis);
    dims.push_back(ArrayAttr::get(context, axes));
  }
  return {dist::ShardingAttr::get(context, sharding.getMesh(),
                                  ArrayAttr::get(context, dims),
                                  sharding.getPartial()),
          split};
}

LogicalResult PipelinePartitioner::analyzeArguments() {
  llvm::StringMap<BlockArgument> byName;
  for (BlockArgument argument : body.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), ParcDialect::kNameAttrName))
      byName[name.getValue()] = argument;
  for (BlockArgument argument : body.getArguments()) {
    if (auto of = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                    kStaleOfAttrName)) {
      auto newest = byName.find(of.getValue());
      if (newest == byName.end())
        return func.emitError("argument #")
               << argument.getArgNumber() << " is a stale version of '"
               << of.getValue() << "', which is no argument";
      info[argument].fromStale = true;
      newestOf[argument] = newest->second;
    }
    auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kRoleAttrName);
    if (role && (role.getValue() == "input" || role.getValue() == "label"))
      info[argument].fromInputs = true;
    auto sharding = func.getArgAttrOfType<dist::ShardingAttr>(
        argument.getArgNumber(), dist::DistDialect::kShardingAttrName);
    auto [rest, split] = withoutMicrobatches(sharding);
    if (!split)
      continue;
    // The micro-batch axis must be the minor split of its dimension, so
    // that a rank's micro-batches are contiguous in its shard.
    ArrayAttr axes = cast<ArrayAttr>(sharding.getDims()[*split]);
    if (axes[axes.size() - 1] != config.microbatchAxis)
      return func.emitError("argument #")
             << argument.getArgNumber()
             << " splits the micro-batch axis before another axis";
    info[argument].perMicrobatch = true;
  }
  return success();
}

SplitAxes PipelinePartitioner::splitAxes(Operation *op) const {
  SplitAxes split;
  auto communication = dyn_cast<dist::CommunicationOpInterface>(op);
  if (!communication)
    return split;
  for (Attribute axis : communication.getGroupAxes())
    if (axis == config.microbatchAxis)
      split.overMicrobatches = true;
    else
      split.rest.push_back(axis);
  return split;
}

LogicalResult PipelinePartitioner::analyzeOp(Operation &op) {
  // The phase: the op's tag, else the latest of its operands'.
  Phase phase = Phase::Forward;
  if (op.hasAttr(kPhaseAttrName)) {
    phase = getPhase(&op);
  } else {
    for (Value operand : op.getOperands())
      phase = std::max(phase, info[operand].phase);
  }
  hasBackward |= phase != Phase::Forward;

  bool anyPerMicrobatch = false, afterSum = false, fromInputs = false,
       fromStale = false;
  for (Value operand : op.getOperands()) {
    anyPerMicrobatch |= info[operand].perMicrobatch;
    afterSum |= info[operand].afterSum;
    fromInputs |= info[operand].fromInputs;
    fromStale |= info[operand].fromStale;
  }
  SplitAxes split = splitAxes(&op);
  bool perMicrobatch = anyPerMicrobatch;
  bool sums = false;
  if (split.overMicrobatches) {
    if (auto allReduce = dyn_cast<dist::AllReduceOp>(op)) {
      if (allReduce.getReduction() != dist::ReductionKind::Sum ||
          !anyPerMicrobatch)
        return op.emitOpError("reduces over the micro-batch axis in a way a "
                              "pipeline cannot fold (only sums of "
                              "per-micro-batch values)");
      sums = true;
    } else if (isa<dist::AllGatherOp>(op) && anyPerMicrobatch) {
      sums = true;
    } else if (isa<dist::AllSliceOp>(op) && !anyPerMicrobatch) {
      perMicrobatch = true;
    } else if (auto axisIndex = dyn_cast<dist::AxisIndexOp>(op)) {
      if (axisIndex.getAxes().size() != 1)
        return op.emitOpError("reads the micro-batch coordinate together "
                              "with other axes, which a pipeline cannot fold");
      perMicrobatch = true;
    } else {
      return op.emitOpError("communicates over the micro-batch axis in a way "
                            "a pipeline cannot fold");
    }
  }
  // A parameter gathered for one reader (ZeRO-3) is gathered again for each
  // micro-batch, so that no copy lives across them.
  if (op.hasAttr(dist::DistDialect::kPerUseAttrName) && !afterSum)
    perMicrobatch = true;
  if (perMicrobatch && afterSum)
    return op.emitOpError(kWholeBatchValueError);

  // The stage (see the pass description).
  int64_t stage = kNoStage;
  std::optional<int64_t> parameters, saved, earliest, latest, largest;
  int64_t largestSize = -1;
  bool fromParameters = false, anyStaged = false;
  for (Value operand : op.getOperands()) {
    const ValueInfo &value = info[operand];
    if (value.stage == kNoStage)
      continue;
    anyStaged = true;
    int64_t size = cast<ShapedType>(operand.getType()).getNumElements();
    if (size > largestSize || (size == largestSize && value.stage > *largest)) {
      largestSize = size;
      largest = value.stage;
    }
    latest = std::max(latest.value_or(value.stage), value.stage);
    earliest = std::min(earliest.value_or(value.stage), value.stage);
    if (value.fromParameters)
      parameters = std::max(parameters.value_or(value.stage), value.stage);
    if (value.phase == Phase::Forward)
      saved = std::max(saved.value_or(value.stage), value.stage);
  }
  if (auto byCost = stageByCost.find(&op); byCost != stageByCost.end()) {
    anyStaged = true;
    latest = std::max(latest.value_or(byCost->second), byCost->second);
  }
  if (anyStaged) {
    fromParameters = !fromInputs;
    if (sums)
      stage = *latest; // the sum runs where its operand is computed
    else if (phase == Phase::Forward || op.hasAttr(kRecomputedAttrName))
      stage = *latest; // a recomputed copy runs where its original does
    else if (parameters)
      stage = *parameters;
    else if (phase == Phase::Update)
      stage = *largest; // a gradient's scaling stays with the gradient
    else
      stage = saved ? *saved : *earliest;
  }
  if (sums)
    for (Value operand : op.getOperands())
      sumsOf[operand].push_back(&op);
  for (Value result : op.getResults()) {
    ValueInfo &value = info[result];
    value.stage = stage;
    value.perMicrobatch = perMicrobatch && !sums;
    value.afterSum = afterSum || sums;
    value.fromParameters = fromParameters;
    value.fromInputs = fromInputs;
    value.fromStale = fromStale;
    value.phase = phase;
  }
  return success();
}

void PipelinePartitioner::computeNeeds() {
  int64_t stages = config.stages;
  auto walk = [&]() {
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      llvm::BitVector where(stages);
      int64_t stage = op.getNumResults() ? info[op.getResult(0)].stage
                                         : kNoStage;
      if (stage != kNoStage) {
        where.set(stageOf(stage));
      } else {
        for (Value result : op.getResults())
          if (auto it = needs.find(result); it != needs.end())
            where |= it->second;
      }
      for (Value operand : op.getOperands()) {
        auto [it, inserted] = needs.try_emplace(operand, stages);
        it->second |= where;
      }
    }
  };
  // A result named like an argument is returned by every stage that takes
  // the argument, so that each stage's executable feeds its own next step.
  // Returning a value can make another stage take an argument (PipeDream-2BW
  // returns the newest weights as the stale ones): to a fixed point.
  llvm::StringMap<BlockArgument> argumentsByName;
  for (BlockArgument argument : body.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), ParcDialect::kNameAttrName))
      argumentsByName[name.getValue()] = argument;
  Operation *terminator = body.getTerminator();
  SmallVector<std::string> names = getResultNames(func);
  resultStages.assign(terminator->getNumOperands(), llvm::BitVector(stages));
  walk();
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
      llvm::BitVector where = resultStages[index];
      auto argument = argumentsByName.find(names[index]);
      if (argument != argumentsByName.end() && needs.count(argument->second))
        where |= needs.lookup(argument->second);
      if (where.none()) {
        int64_t stage = info[value].stage;
        where.set(stage == kNoStage ? 0 : stageOf(stage));
      }
      changed |= where != resultStages[index];
      resultStages[index] = where;
    }
    needs.clear();
    for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
      auto [it, inserted] = needs.try_emplace(value, stages);
      it->second |= resultStages[index];
    }
    walk();
  }
}

LogicalResult PipelinePartitioner::assignChannels() {
  int64_t next = 0;
  auto assign = [&](Value value) {
    ValueInfo &valueInfo = info[value];
    if (valueInfo.stage == kNoStage || isa<BlockArgument>(value))
      return;
    llvm::BitVector others = needs.lookup(value);
    if (others.empty())
      return;
    others.reset(stageOf(valueInfo.stage));
    if (others.none())
      return;
    valueInfo.channel = next;
    next += valueInfo.perMicrobatch ? getChannelsPerValue() : 1;
  };
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults())
      assign(result);
  if (next > kMaxChannels)
    return func.emitError("the pipeline needs ")
           << next << " point-to-point channels, more than MPI guarantees ("
           << kMaxChannels << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

Value StageEmitter::sliceMicrobatch(Value whole, unsigned dim,
                                    int64_t microbatch) {
  auto type = cast<RankedTensorType>(whole.getType());
  SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
      strides(type.getRank(), 1);
  sizes[dim] /= p.config.microbatches;
  // The next step's micro-batches are this step's inputs again.
  offsets[dim] = (microbatch % p.config.microbatches) * sizes[dim];
  auto result = RankedTensorType::get(sizes, type.getElementType());
  return SliceOp::create(builder, whole.getLoc(), result, whole, offsets,
                         sizes, strides);
}

int64_t StageEmitter::getCopyIndex(Value value, int64_t microbatch) const {
  auto it = p.info.find(value);
  if (it == p.info.end())
    return kInvariant;
  if (it->second.perMicrobatch)
    return microbatch;
  return p.isNextStep(microbatch) && it->second.fromStale ? kNextStepInvariant
                                                          : kInvariant;
}

FailureOr<Value> StageEmitter::get(Value value, int64_t microbatch) {
  const ValueInfo &valueInfo = p.info[value];
  int64_t copy = getCopyIndex(value, microbatch);
  if (valueInfo.perMicrobatch && microbatch < 0)
    return emitError(value.getLoc(), "internal error: a per-micro-batch value "
                                     "is used outside the micro-batches");
  auto key = std::make_pair(value.getAsOpaquePointer(), copy);
  if (auto it = copies.find(key); it != copies.end())
    return it->second;
  Value result;
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    // The next step's micro-batches read the newest weights.
    Value whole = arguments.lookup(
        copy == kNextStepInvariant ? p.newestOf.lookup(argument) : argument);
    if (!whole)
      return emitError(value.getLoc(), "internal error: stage ")
             << stage << " lacks an argument it reads";
    if (valueInfo.perMicrobatch) {
      auto sharding = p.func.getArgAttrOfType<dist::ShardingAttr>(
          argument.getArgNumber(), dist::DistDialect::kShardingAttrName);
      result = sliceMicrobatch(whole, *p.withoutMicrobatches(sharding).second,
                               copy);
    } else {
      result = whole;
    }
  } else if (valueInfo.stage == kNoStage) {
    if (failed(emit(value.getDefiningOp(), microbatch)))
      return failure();
    return copies.at(key);
  } else if (p.stageOf(valueInfo.stage) == stage) {
    // The next step's version of an invariant value derived from the
    // weights is derived again, from the newest.
    if (copy == kNextStepInvariant) {
      if (failed(emit(value.getDefiningOp(), kNextStepInvariant)))
        return failure();
      return copies.at(key);
    }
    return emitError(value.getLoc(), "internal error: a value is used on stage ")
           << stage << " before it is computed there";
  } else if (copy == kNextStepInvariant) {
    return emitError(value.getLoc(),
                     "PipeDream-2BW cannot send a value derived from the "
                     "weights (not per micro-batch) from stage ")
           << p.stageOf(valueInfo.stage) << " to stage " << stage;
  } else {
    result = dist::RecvOp::create(
        builder, value.getLoc(), value.getType(),
        p.mesh.getSymName(), builder.getArrayAttr({p.config.axis}),
        ArrayRef<int64_t>{p.stageOf(valueInfo.stage)},
        valueInfo.channel + std::max<int64_t>(copy, 0));
  }
  copies[key] = result;
  return result;
}

void StageEmitter::produced(Value value, Value copy, int64_t microbatch) {
  const ValueInfo &valueInfo = p.info[value];
  int64_t index = getCopyIndex(value, microbatch);
  copies[{value.getAsOpaquePointer(), index}] = copy;
  if (valueInfo.stage == kNoStage || p.stageOf(valueInfo.stage) != stage)
    return;
  if (valueInfo.channel >= 0) {
    llvm::BitVector others = p.needs.lookup(value);
    others.reset(stage);
    for (int64_t to : others.set_bits())
      dist::SendOp::create(builder, value.getLoc(), copy,
                           p.mesh.getSymName(),
                           builder.getArrayAttr({p.config.axis}),
                           ArrayRef<int64_t>{to},
                           valueInfo.channel + std::max<int64_t>(index, 0));
  }
  // Gradient accumulation: each micro-batch's part joins the running sum
  // as soon as it exists (emitStage refuses sums of the next step's).
  if (p.isNextStep(microbatch))
    return;
  if (auto it = p.sumsOf.find(value); it != p.sumsOf.end())
    for (Operation *sum : it->second)
      if (isa<dist::AllReduceOp>(sum)) {
        Value &total = sums[sum];
        if (!total) {
          total = copy;
          continue;
        }
        auto add = AddOp::create(builder, value.getLoc(), total, copy);
        setPhase(add, p.info[value].phase);
        total = add;
      }
}

LogicalResult StageEmitter::emitSumOverMicrobatches(Operation *op) {
  SplitAxes split = p.splitAxes(op);
  auto meshRef = FlatSymbolRefAttr::get(p.mesh.getSymNameAttr());
  ArrayAttr rest = builder.getArrayAttr(split.rest);
  Value operand = op->getOperand(0);
  Value total;
  if (auto allReduce = dyn_cast<dist::AllReduceOp>(op)) {
    total = sums.lookup(op);
    if (!total) // an operand without a stage: summed here
      for (int64_t j = 0; j < p.config.microbatches; ++j) {
        FailureOr<Value> part = get(operand, j);
        if (failed(part))
          return failure();
        total = total ? AddOp::create(builder, op->getLoc(), total, *part)
                            .getResult()
                      : *part;
      }
    if (!split.rest.empty())
      total = dist::AllReduceOp::create(builder, op->getLoc(), total.getType(),
                                        total, meshRef, rest,
                                        allReduce.getReductionAttr());
  } else {
    auto allGather = cast<dist::AllGatherOp>(op);
    FailureOr<Value> joined =
        joinMicrobatches(operand, allGather.getDim(), op->getLoc());
    if (failed(joined))
      return failure();
    total = *joined;
    if (!split.rest.empty())
      total = dist::AllGatherOp::create(builder, op->getLoc(), op->getResult(0).getType(),
                                        total, meshRef, rest,
                                        allGather.getDimAttr());
  }
  produced(op->getResult(0), total, -1);
  return success();
}

LogicalResult StageEmitter::emit(Operation *op, int64_t microbatch) {
  SplitAxes split = p.splitAxes(op);
  auto meshRef = FlatSymbolRefAttr::get(p.mesh.getSymNameAttr());
  if (split.overMicrobatches) {
    if (isa<dist::AllReduceOp, dist::AllGatherOp>(op))
      return emitSumOverMicrobatches(op);
    if (isa<dist::AxisIndexOp>(op)) {
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      Value index = ConstantOp::create(
          builder, op->getLoc(),
          DenseElementsAttr::get(
              type,
              builder.getI64IntegerAttr(microbatch % p.config.microbatches)));
      produced(op->getResult(0), index, microbatch);
      return success();
    }
    // all_slice over the micro-batch axis (minor): this rank's slice over
    // the other axes, then the micro-batch's part of it.
    auto allSlice = cast<dist::AllSliceOp>(op);
    FailureOr<Value> whole =
        get(allSlice.getInput(),
            p.isNextStep(microbatch) ? kNextStepInvariant : kInvariant);
    if (failed(whole))
      return failure();
    Value mine = *whole;
    if (!split.rest.empty()) {
      auto type = cast<RankedTensorType>(mine.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[allSlice.getDim()] =
          allSlice.getType().getDimSize(allSlice.getDim()) *
          p.config.microbatches;
      mine = dist::AllSliceOp::create(
          builder, op->getLoc(),
          RankedTensorType::get(shape, type.getElementType()), mine, meshRef,
          builder.getArrayAttr(split.rest), allSlice.getDimAttr());
    }
    produced(op->getResult(0), sliceMicrobatch(mine, allSlice.getDim(), microbatch),
             microbatch);
    return success();
  }
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    FailureOr<Value> copy = get(operand, microbatch);
    if (failed(copy))
      return failure();
    mapping.map(operand, *copy);
  }
  Operation *clone = builder.clone(*op, mapping);
  for (auto [result, copy] : llvm::zip_equal(op->getResults(), clone->getResults()))
    produced(result, copy, microbatch);
  return success();
}

FailureOr<Value> StageEmitter::getResult(Value value, unsigned resultIndex) {
  if (!p.info[value].perMicrobatch)
    return get(value, -1);
  // A per-micro-batch result (a forward model's output): its micro-batches
  // joined along the dimension the micro-batch axis splits.
  auto sharding = p.func.getResultAttrOfType<dist::ShardingAttr>(
      resultIndex, dist::DistDialect::kShardingAttrName);
  std::optional<unsigned> dim = p.withoutMicrobatches(sharding).second;
  if (!dim)
    return emitError(value.getLoc(), "result #")
           << resultIndex << " differs per micro-batch but its sharding does "
                             "not split it over micro-batches";
  return joinMicrobatches(value, *dim, value.getLoc());
}

FailureOr<Value> StageEmitter::joinMicrobatches(Value value, unsigned dim,
                                                Location loc) {
  SmallVector<Value> parts;
  for (int64_t j = 0; j < p.config.microbatches; ++j) {
    FailureOr<Value> part = get(value, j);
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] *= p.config.microbatches;
  return ConcatOp::create(builder, loc,
                          RankedTensorType::get(shape, type.getElementType()),
                          parts, dim)
      .getResult();
}

func::FuncOp PipelinePartitioner::createStageFunction(
    int64_t stage, StringRef suffix, SmallVectorImpl<BlockArgument> &taken) {
  OpBuilder builder(func);
  MLIRContext *context = func.getContext();
  // Arguments: those the stage needs, whole over its micro-batches.
  SmallVector<Type> argumentTypes;
  SmallVector<DictionaryAttr> argumentAttrs;
  for (BlockArgument argument : body.getArguments()) {
    auto it = needs.find(argument);
    if (it == needs.end() || !it->second.test(stage))
      continue;
    taken.push_back(argument);
    NamedAttrList attrs(func.getArgAttrDict(argument.getArgNumber()));
    auto type = cast<RankedTensorType>(argument.getType());
    auto [sharding, split] = withoutMicrobatches(
        dyn_cast_or_null<dist::ShardingAttr>(
            attrs.get(dist::DistDialect::kShardingAttrName)));
    if (sharding)
      attrs.set(dist::DistDialect::kShardingAttrName, sharding);
    if (split) {
      SmallVector<int64_t> shape(type.getShape());
      shape[*split] *= config.microbatches;
      type = RankedTensorType::get(shape, type.getElementType());
    }
    argumentTypes.push_back(type);
    argumentAttrs.push_back(attrs.getDictionary(context));
  }
  std::string name =
      (func.getSymName() + ".stage" + std::to_string(stage) + suffix).str();
  auto stageFunc = func::FuncOp::create(
      builder, func.getLoc(), name,
      builder.getFunctionType(argumentTypes, {}));
  stageFunc.setAllArgAttrs(argumentAttrs);
  stageFunc.addEntryBlock();
  for (NamedAttribute attr : func->getDiscardableAttrs())
    stageFunc->setAttr(attr.getName(), attr.getValue());
  return stageFunc;
}

SmallVector<std::pair<Value, int64_t>>
PipelinePartitioner::getCarriedReceives(int64_t stage) {
  SmallVector<std::pair<Value, int64_t>> carried;
  int64_t warmup = getWarmup(stage);
  for (Operation &op : body.without_terminator())
    for (Value value : op.getResults()) {
      const ValueInfo &valueInfo = info[value];
      if (!valueInfo.perMicrobatch || valueInfo.stage == kNoStage ||
          valueInfo.phase != Phase::Forward || valueInfo.channel < 0)
        continue;
      int64_t from = stageOf(valueInfo.stage);
      llvm::BitVector where = needs.lookup(value);
      if (from >= stage || where.empty() || !where.test(stage))
        continue;
      for (int64_t k = warmup; k < getWarmup(from); ++k)
        carried.push_back({value, k});
    }
  return carried;
}

/// A replicated layout: a `carry` tensor is its rank's own, neither a part
/// of a global tensor nor gathered.
static dist::ShardingAttr getRankLocalSharding(dist::MeshOp mesh,
                                               RankedTensorType type) {
  Builder builder(mesh.getContext());
  SmallVector<Attribute> dims(type.getRank(), builder.getArrayAttr({}));
  return dist::ShardingAttr::get(
      mesh.getContext(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
      builder.getArrayAttr(dims), builder.getArrayAttr({}));
}

DictionaryAttr PipelinePartitioner::getCarryAttrs(StringRef name,
                                                  RankedTensorType type,
                                                  bool argument) {
  Builder builder(func.getContext());
  NamedAttrList attrs;
  attrs.set(ParcDialect::kNameAttrName, builder.getStringAttr(name));
  attrs.set(dist::DistDialect::kShardingAttrName,
            getRankLocalSharding(mesh, type));
  if (argument) {
    attrs.set(ParcDialect::kRoleAttrName, builder.getStringAttr("carry"));
    attrs.set(ParcDialect::kInitAttrName,
              InitAttr::get(func.getContext(), InitDistribution::Constant,
                            APFloat(0.0), APFloat(0.0)));
  }
  return attrs.getDictionary(func.getContext());
}

LogicalResult
StageEmitter::carryOver(func::FuncOp stageFunc, Operation *before,
                        Operation *last,
                        SmallVectorImpl<std::pair<Value, int64_t>> &carried) {
  Block &entry = stageFunc.front();
  SmallVector<Operation *> range;
  if (last && last != before)
    for (auto it = before ? std::next(before->getIterator()) : entry.begin();;
         ++it) {
      range.push_back(&*it);
      if (&*it == last)
        break;
    }
  // What the previous step's units computed or received is this step's
  // argument; the invariants they made and their input slices stay.
  llvm::DenseSet<Value> invariants;
  for (const auto &[key, copy] : copies)
    if (key.second < 0)
      invariants.insert(copy);
  llvm::DenseSet<Operation *> previous;
  for (Operation *op : range) {
    bool stays = (isa<SliceOp>(op) && isa<BlockArgument>(op->getOperand(0))) ||
                 llvm::all_of(op->getResults(), [&](Value result) {
                   return invariants.contains(result);
                 });
    if (!stays || isa<dist::SendOp, dist::RecvOp>(op))
      previous.insert(op);
  }
  llvm::DenseMap<Value, std::pair<void *, int64_t>> keyOf;
  for (const auto &[key, copy] : copies)
    if (key.second >= 0)
      keyOf[copy] = key;
  for (Operation *op : range) {
    if (!previous.contains(op))
      continue;
    for (Value result : op->getResults()) {
      auto usedLater = [&](OpOperand &use) {
        return !previous.contains(use.getOwner());
      };
      if (llvm::none_of(result.getUses(), usedLater))
        continue;
      auto key = keyOf.find(result);
      if (key == keyOf.end())
        return op->emitError("internal error: a value of the previous "
                             "step's units belongs to no micro-batch");
      std::string name = "pipeline.carry." + std::to_string(carried.size());
      auto type = cast<RankedTensorType>(result.getType());
      unsigned index = stageFunc.getNumArguments();
      if (failed(stageFunc.insertArgument(
              index, type, p.getCarryAttrs(name, type, /*argument=*/true),
              result.getLoc())))
        return failure();
      BlockArgument argument = stageFunc.getArgument(index);
      result.replaceUsesWithIf(argument, usedLater);
      copies[key->second] = argument;
      carried.push_back(
          {Value::getFromOpaquePointer(key->second.first), key->second.second});
    }
  }
  for (Operation *op : llvm::reverse(range))
    if (previous.contains(op)) {
      op->dropAllUses();
      op->erase();
    }
  return success();
}

LogicalResult
StageEmitter::returnCarried(func::FuncOp stageFunc,
                            ArrayRef<std::pair<Value, int64_t>> carried) {
  Operation *terminator = stageFunc.front().getTerminator();
  for (auto [index, key] : llvm::enumerate(carried)) {
    auto [value, microbatch] = key;
    // Emitted with the step's last units: nothing may follow the return.
    int64_t next = p.config.microbatches + microbatch;
    auto copy =
        copies.find({value.getAsOpaquePointer(), getCopyIndex(value, next)});
    if (copy == copies.end())
      return emitError(value.getLoc(), "internal error: stage ")
             << stage << " does not compute the next step's carried value";
    auto type = cast<RankedTensorType>(copy->second.getType());
    unsigned position = stageFunc.getNumResults();
    terminator->insertOperands(terminator->getNumOperands(), {copy->second});
    if (failed(stageFunc.insertResult(
            position, type,
            p.getCarryAttrs("pipeline.carry." + std::to_string(index), type,
                            /*argument=*/false))))
      return failure();
  }
  return success();
}

FailureOr<func::FuncOp> PipelinePartitioner::emitStage(int64_t stage) {
  MLIRContext *context = func.getContext();
  SmallVector<BlockArgument> taken;
  func::FuncOp stageFunc = createStageFunction(stage, "", taken);
  Block *entry = &stageFunc.front();
  OpBuilder builder(stageFunc);
  StageEmitter emitter(*this, stage, stageFunc);
  for (auto [argument, local] : llvm::zip_equal(taken, entry->getArguments()))
    emitter.arguments[argument] = local;

  auto onStage = [&](Operation &op) {
    if (!op.getNumResults())
      return false;
    int64_t chunk = info[op.getResult(0)].stage;
    return chunk != kNoStage && stageOf(chunk) == stage;
  };
  if (isAsynchronous() && getWarmup(stage) > 0)
    for (Operation &op : body.without_terminator())
      if (onStage(op) && info[op.getResult(0)].phase == Phase::Forward &&
          info[op.getResult(0)].perMicrobatch && sumsOf.count(op.getResult(0)))
        return op.emitOpError("is summed over micro-batches in the forward "
                              "pass of stage ")
               << stage << ", which PipeDream-2BW runs across steps";
  // Invariant ops first, then the micro-batches, then what follows their
  // sum.
  for (Operation &op : body.without_terminator())
    if (onStage(op) && !info[op.getResult(0)].perMicrobatch &&
        !info[op.getResult(0)].afterSum &&
        failed(emitter.emit(&op, kInvariant)))
      return failure();
  // The backward ops a zero-bubble schedule runs as input gradients: those
  // whose results another stage needs (the gradient sent back) or an input
  // gradient op reads; the others compute only weight gradients.
  llvm::DenseSet<Operation *> inputGradientOps;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!onStage(op) || !info[op.getResult(0)].perMicrobatch ||
        info[op.getResult(0)].phase == Phase::Forward)
      continue;
    bool feedsInputGradients = llvm::any_of(op.getResults(), [&](Value v) {
      llvm::BitVector others = needs.lookup(v);
      if (!others.empty())
        others.reset(stage);
      return others.any() || llvm::any_of(v.getUsers(), [&](Operation *user) {
               return inputGradientOps.contains(user);
             });
    });
    if (feedsInputGradients)
      inputGradientOps.insert(&op);
  }
  auto inUnit = [&](Operation &op, ScheduleUnit unit) {
    bool backward = info[op.getResult(0)].phase != Phase::Forward;
    switch (unit.kind) {
    case ScheduleUnit::Forward:
      return !backward;
    case ScheduleUnit::Backward:
      return backward;
    case ScheduleUnit::InputGradient:
      return backward && inputGradientOps.contains(&op);
    case ScheduleUnit::WeightGradient:
      return backward && !inputGradientOps.contains(&op);
    }
    return false;
  };
  auto emitUnit = [&](ScheduleUnit unit) -> LogicalResult {
    int64_t microbatch =
        unit.step > 0 ? config.microbatches + unit.microbatch : unit.microbatch;
    for (Operation &op : body.without_terminator()) {
      if (!onStage(op) || !info[op.getResult(0)].perMicrobatch ||
          info[op.getResult(0)].stage != unit.chunk)
        continue;
      if (inUnit(op, unit) && failed(emitter.emit(&op, microbatch)))
        return failure();
    }
    return success();
  };
  // An asynchronous pipeline's step starts with the units that ran in the
  // previous step and the receives that ended it: emitted here, then
  // turned into `carry` arguments (StageEmitter::carryOver).
  SmallVector<std::pair<Value, int64_t>> received =
      isAsynchronous() ? getCarriedReceives(stage)
                       : SmallVector<std::pair<Value, int64_t>>();
  auto emitReceives = [&](int64_t offset) -> LogicalResult {
    for (auto [value, microbatch] : received)
      if (failed(emitter.get(value, offset + microbatch)))
        return failure();
    return success();
  };
  Operation *beforePrevious = entry->empty() ? nullptr : &entry->back();
  SmallVector<ScheduleUnit> units =
      getStageSchedule(config.schedule, stage, config.stages,
                       config.microbatches, config.virtualStages, hasBackward);
  auto firstOfStep = llvm::find_if(
      units, [](const ScheduleUnit &unit) { return unit.step >= 0; });
  for (ScheduleUnit unit : llvm::make_range(units.begin(), firstOfStep))
    if (failed(emitUnit(unit)))
      return failure();
  if (failed(emitReceives(0)))
    return failure();
  Operation *lastPrevious = entry->empty() ? nullptr : &entry->back();
  for (ScheduleUnit unit : llvm::make_range(firstOfStep, units.end()))
    if (failed(emitUnit(unit)))
      return failure();
  if (failed(emitReceives(config.microbatches)))
    return failure();
  for (Operation &op : body.without_terminator())
    if (onStage(op) && info[op.getResult(0)].afterSum &&
        failed(emitter.emit(&op, kInvariant)))
      return failure();

  // Results.
  Operation *terminator = body.getTerminator();
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    if (!resultStages[index].test(stage))
      continue;
    FailureOr<Value> result = emitter.getResult(value, index);
    if (failed(result))
      return failure();
    results.push_back(*result);
    NamedAttrList attrs(func.getResultAttrDict(index));
    if (auto sharding = dyn_cast_or_null<dist::ShardingAttr>(
            attrs.get(dist::DistDialect::kShardingAttrName)))
      attrs.set(dist::DistDialect::kShardingAttrName,
                withoutMicrobatches(sharding).first);
    resultAttrs.push_back(attrs.getDictionary(context));
  }
  OpBuilder end = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(end, terminator->getLoc(), results);
  stageFunc.setFunctionType(builder.getFunctionType(
      stageFunc.getArgumentTypes(), TypeRange(ValueRange(results))));
  stageFunc.setAllResultAttrs(resultAttrs);
  stageFunc->setAttr(kStageAttrName, builder.getI64IntegerAttr(stage));
  if (!isAsynchronous())
    return stageFunc;

  SmallVector<std::pair<Value, int64_t>> carried;
  if (failed(emitter.carryOver(stageFunc, beforePrevious, lastPrevious,
                               carried)) ||
      failed(emitter.returnCarried(stageFunc, carried)) ||
      failed(emitPrologue(stage, stageFunc, carried)))
    return failure();
  return stageFunc;
}

FailureOr<func::FuncOp>
PipelinePartitioner::emitPrologue(int64_t stage, func::FuncOp stageFunc,
                                  ArrayRef<std::pair<Value, int64_t>> carried) {
  SmallVector<BlockArgument> taken;
  func::FuncOp prologue = createStageFunction(stage, ".prologue", taken);
  Block *entry = &prologue.front();
  StageEmitter emitter(*this, stage, prologue);
  for (auto [argument, local] : llvm::zip_equal(taken, entry->getArguments()))
    emitter.arguments[argument] = local;
  // The first step's warm-up forwards, as a step's cooldown runs the next
  // one's, on the initial weights.
  for (Operation &op : body.without_terminator()) {
    if (!op.getNumResults())
      continue;
    const ValueInfo &valueInfo = info[op.getResult(0)];
    if (valueInfo.stage != kNoStage && stageOf(valueInfo.stage) == stage &&
        !valueInfo.perMicrobatch && !valueInfo.afterSum &&
        !valueInfo.fromStale && failed(emitter.emit(&op, kInvariant)))
      return failure();
  }
  for (ScheduleUnit unit :
       getStageSchedule(config.schedule, stage, config.stages,
                        config.microbatches, config.virtualStages, hasBackward))
    if (unit.step > 0)
      for (Operation &op : body.without_terminator()) {
        if (!op.getNumResults())
          continue;
        const ValueInfo &valueInfo = info[op.getResult(0)];
        if (valueInfo.stage != kNoStage && stageOf(valueInfo.stage) == stage &&
            valueInfo.perMicrobatch && valueInfo.stage == unit.chunk &&
            valueInfo.phase == Phase::Forward &&
            failed(emitter.emit(&op, config.microbatches + unit.microbatch)))
          return failure();
      }
  for (auto [value, microbatch] : carried)
    if (failed(emitter.get(value, config.microbatches + microbatch)))
      return failure();
  OpBuilder end = OpBuilder::atBlockEnd(entry);
  auto returnOp = func::ReturnOp::create(end, func.getLoc(), ValueRange());
  // The results: the carried values, and each stale version set to the
  // initial weights.
  if (failed(emitter.returnCarried(prologue, carried)))
    return failure();
  for (BlockArgument argument : taken) {
    BlockArgument newest = newestOf.lookup(argument);
    if (!newest)
      continue;
    Value initial = emitter.arguments.lookup(newest);
    if (!initial)
      return emitError(argument.getLoc(), "internal error: stage ")
             << stage << " lacks the newest version of a stale weight";
    unsigned position = prologue.getNumResults();
    returnOp->insertOperands(returnOp->getNumOperands(), {initial});
    if (failed(prologue.insertResult(
            position, initial.getType(),
            DictionaryAttr::get(
                func.getContext(),
                {NamedAttribute(ParcDialect::kNameAttrName,
                                func.getArgAttr(argument.getArgNumber(),
                                                ParcDialect::kNameAttrName)),
                 NamedAttribute(dist::DistDialect::kShardingAttrName,
                                prologue.getArgAttr(
                                    cast<BlockArgument>(initial).getArgNumber(),
                                    dist::DistDialect::kShardingAttrName))}))))
      return failure();
  }
  // What the warm-up does not need (the step's other invariants, unread
  // arguments) goes.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  llvm::BitVector unused(prologue.getNumArguments());
  for (BlockArgument argument : prologue.getArguments())
    if (argument.use_empty())
      unused.set(argument.getArgNumber());
  if (failed(prologue.eraseArguments(unused)))
    return failure();
  prologue->setAttr(kPrologueOfAttrName,
                    FlatSymbolRefAttr::get(stageFunc.getSymNameAttr()));
  return prologue;
}

/// Runs every stage's sends and receives with buffered sends; the first
/// receive that can never complete is the error.
static LogicalResult checkDeadlockFree(MutableArrayRef<func::FuncOp> stages) {
  SmallVector<SmallVector<Operation *>> events(stages.size());
  for (auto [stage, func] : llvm::enumerate(stages)) {
    SmallVector<Operation *> &stageEvents = events[stage];
    func.walk([&](Operation *op) {
      if (isa<dist::SendOp, dist::RecvOp>(op))
        stageEvents.push_back(op);
    });
  }
  SmallVector<size_t> next(stages.size(), 0);
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> inFlight;
  bool moved = true;
  while (moved) {
    moved = false;
    for (int64_t stage = 0; stage < int64_t(stages.size()); ++stage)
      for (; next[stage] < events[stage].size(); ++next[stage]) {
        Operation *op = events[stage][next[stage]];
        if (auto send = dyn_cast<dist::SendOp>(op)) {
          ++inFlight[{stage, send.getPeer().front(), send.getChannel()}];
        } else {
          auto recv = cast<dist::RecvOp>(op);
          int64_t &count =
              inFlight[{recv.getPeer().front(), stage, recv.getChannel()}];
          if (count == 0)
            break;
          --count;
        }
        moved = true;
      }
  }
  for (auto [stage, list] : llvm::enumerate(events))
    if (next[stage] < list.size())
      return list[next[stage]]->emitOpError("of stage ")
             << stage << " waits for a message no stage sends before it: "
                         "the pipeline schedule deadlocks";
  return success();
}

// A sum over micro-batches of `a + b` (a tied weight's two gradients, from
// the first and the last stage) is the sum of the two sums: each stage then
// accumulates its own part and sends it once, not once per micro-batch.
void PipelinePartitioner::sumPartsSeparately() {
  SmallVector<dist::AllReduceOp> worklist;
  func.walk([&](dist::AllReduceOp sum) { worklist.push_back(sum); });
  while (!worklist.empty()) {
    dist::AllReduceOp sum = worklist.pop_back_val();
    auto add = sum.getInput().getDefiningOp<AddOp>();
    SplitAxes split = splitAxes(sum);
    if (!add || !add->hasOneUse() || !split.overMicrobatches ||
        sum.getReduction() != dist::ReductionKind::Sum ||
        add.getLhs().getType() != add.getType() ||
        add.getRhs().getType() != add.getType())
      continue;
    OpBuilder builder(sum);
    auto microbatches =
        builder.getArrayAttr(ArrayRef<Attribute>{config.microbatchAxis});
    SmallVector<Value> parts;
    for (Value operand : {add.getLhs(), add.getRhs()}) {
      auto part = dist::AllReduceOp::create(
          builder, sum.getLoc(), operand.getType(), operand,
          sum.getMeshAttr(), microbatches, sum.getReductionAttr());
      part->setDiscardableAttrs(sum->getDiscardableAttrDictionary());
      parts.push_back(part);
      worklist.push_back(part);
    }
    auto total = AddOp::create(builder, add.getLoc(), parts[0], parts[1]);
    total->setDiscardableAttrs(add->getDiscardableAttrDictionary());
    Value result = total;
    if (!split.rest.empty()) {
      auto rest = dist::AllReduceOp::create(
          builder, sum.getLoc(), sum.getType(), total, sum.getMeshAttr(),
          builder.getArrayAttr(split.rest), sum.getReductionAttr());
      rest->setDiscardableAttrs(sum->getDiscardableAttrDictionary());
      result = rest;
    }
    sum.replaceAllUsesWith(result);
    sum.erase();
    add.erase();
  }
}

// A value that depends on no micro-batch but that only what follows their
// sum reads (a parameter's slice for its ZeRO update) is computed after the
// last micro-batch too: made before the first, it would live through them.
void PipelinePartitioner::deferUpdateOnlyValues() {
  Operation *terminator = body.getTerminator();
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (op.getNumResults() == 0 || info[op.getResult(0)].perMicrobatch ||
        info[op.getResult(0)].afterSum)
      continue;
    bool readAfterSum = llvm::all_of(op.getResults(), [&](Value result) {
      return !result.use_empty() &&
             llvm::all_of(result.getUsers(), [&](Operation *user) {
               return user != terminator && user->getNumResults() &&
                      info[user->getResult(0)].afterSum;
             });
    });
    if (readAfterSum)
      for (Value result : op.getResults())
        info[result].afterSum = true;
  }
}

FailureOr<SmallVector<func::FuncOp>> PipelinePartitioner::run() {
  sumPartsSeparately();
  if (failed(assignLayerStages()) || failed(analyzeArguments()))
    return failure();
  for (Operation &op : body.without_terminator())
    if (failed(analyzeOp(op)))
      return failure();
  deferUpdateOnlyValues();
  computeNeeds();
  if (failed(assignChannels()))
    return failure();
  SmallVector<func::FuncOp> stages, prologues;
  auto eraseBuilt = [&] {
    ModuleOp module = func->getParentOfType<ModuleOp>();
    for (auto built : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (built->hasAttr(kPrologueOfAttrName) ||
          llvm::is_contained(stages, built))
        built.erase();
  };
  for (int64_t stage = 0; stage < config.stages; ++stage) {
    FailureOr<func::FuncOp> stageFunc = emitStage(stage);
    if (failed(stageFunc)) {
      eraseBuilt();
      return failure();
    }
    stages.push_back(*stageFunc);
    if (func::FuncOp prologue = getPrologue(*stageFunc))
      prologues.push_back(prologue);
  }
  // A step's messages, and the prologues', are matched within it.
  if (failed(checkDeadlockFree(stages)) ||
      (!prologues.empty() && failed(checkDeadlockFree(prologues)))) {
    eraseBuilt();
    return failure();
  }
  return stages;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Reads `dist.pipeline` (written by ApplyPlan).
static FailureOr<PipelineConfig> readConfig(func::FuncOp func,
                                            dist::MeshOp mesh) {
  auto attr = func->getAttrOfType<DictionaryAttr>(kPipelineAttrName);
  auto axis = attr.getAs<StringAttr>("axis");
  auto microbatchAxis = attr.getAs<StringAttr>("microbatch_axis");
  auto microbatches = attr.getAs<IntegerAttr>("microbatches");
  auto schedule = attr.getAs<StringAttr>("schedule");
  if (!axis || !microbatchAxis || !microbatches || !schedule)
    return func.emitError("malformed ")
           << kPipelineAttrName
           << ": needs axis, microbatch_axis, microbatches and schedule";
  PipelineConfig config;
  config.axis = axis;
  config.microbatchAxis = microbatchAxis;
  config.microbatches = microbatches.getInt();
  std::optional<int64_t> stages = mesh.getAxisSize(axis.getValue());
  std::optional<int64_t> size = mesh.getAxisSize(microbatchAxis.getValue());
  if (!stages || !size || *size != config.microbatches)
    return func.emitError("the mesh lacks the pipeline axis '")
           << axis.getValue() << "' or the micro-batch axis '"
           << microbatchAxis.getValue() << "' of size "
           << config.microbatches;
  config.stages = *stages;
  std::optional<PipelineSchedule> parsed =
      parsePipelineScheduleName(schedule.getValue());
  if (!parsed)
    return func.emitError("pipeline schedule '")
           << schedule.getValue()
           << "' is not built (gpipe, 1f1b, interleaved-1f1b, zb-h1, "
              "pipedream-2bw)";
  config.schedule = *parsed;
  if (auto virtualStages = attr.getAs<IntegerAttr>("virtual_stages"))
    config.virtualStages = virtualStages.getInt();
  if ((config.virtualStages > 1) !=
          (config.schedule == PipelineSchedule::Interleaved1F1B) ||
      config.virtualStages < 1 ||
      (config.virtualStages > 1 && config.microbatches % config.stages != 0))
    return func.emitError("an interleaved pipeline needs virtual_stages > 1 "
                          "and micro-batches a multiple of the stages");
  if (auto layers = attr.getAs<DenseI64ArrayAttr>("layers_per_stage"))
    config.layersPerStage = SmallVector<int64_t>(layers.asArrayRef());
  return config;
}

namespace {
struct PipelinePartitionPass
    : public parc::impl::PipelinePartitionPassBase<PipelinePartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> pipelined;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kPipelineAttrName) && !func->hasAttr(kStageAttrName))
        pipelined.push_back(func);
    llvm::SmallPtrSet<Operation *, 2> meshes;
    for (func::FuncOp func : pipelined) {
      if (!func->hasAttr("dist.partitioned")) {
        func.emitError("is pipelined but not partitioned; run "
                       "--parc-partition first");
        return signalPassFailure();
      }
      auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
      dist::MeshOp mesh = meshName ? dist::lookupMesh(func, meshName) : nullptr;
      if (!mesh) {
        func.emitError("names no mesh it runs on");
        return signalPassFailure();
      }
      FailureOr<PipelineConfig> config = readConfig(func, mesh);
      if (failed(config))
        return signalPassFailure();
      StringAttr microbatchAxis = config->microbatchAxis;
      if (failed(PipelinePartitioner(func, mesh, std::move(*config)).run()))
        return signalPassFailure();
      func.erase();
      // The micro-batch axis is folded into time: the mesh loses it.
      if (meshes.insert(mesh).second) {
        SmallVector<Attribute> names;
        SmallVector<int64_t> sizes;
        for (auto [name, size] :
             llvm::zip_equal(mesh.getAxisNames(), mesh.getAxisSizes()))
          if (name != microbatchAxis) {
            names.push_back(name);
            sizes.push_back(size);
          }
        OpBuilder builder(mesh);
        mesh.setAxisNamesAttr(builder.getArrayAttr(names));
        mesh.setAxisSizesAttr(builder.getDenseI64ArrayAttr(sizes));
      }
    }
  }
};
} // namespace
