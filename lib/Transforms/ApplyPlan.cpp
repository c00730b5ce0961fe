//===- ApplyPlan.cpp - attaches a plan's mesh and shardings ---------------===//
//
// The plan is read by readPlan (parc/Plan/Plan.h), which rejects malformed
// files with their line:column; this pass applies what parc-compile builds
// (mesh, shardings, ZeRO 0-3, pipelines) and rejects the
// parts it does not build yet.
//
// Micro-batches are data parallelism in time: the mesh gets one more axis,
// `microbatch`, minor to every other, that splits each input's batch
// dimension after the plan's axes. Propagation and partitioning then build
// the program of one micro-batch, and --parc-pipeline-partition folds the
// axis into a sequence over micro-batches on each stage.
//
//===----------------------------------------------------------------------===//

#include "dist/IR/DistOps.h"
#include "parc/IR/DimensionFlow.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcInterfaces.h"
#include "parc/IR/ParcOps.h"
#include "parc/Plan/Plan.h"
#include "parc/Transforms/LocalSgd.h"
#include "parc/Transforms/MixedPrecision.h"
#include "parc/Transforms/ParameterServer.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/Pipeline.h"
#include "parc/Transforms/Recompute.h"
#include "parc/Transforms/StaleWeights.h"
#include "parc/Transforms/TensorSharding.h"

#include "mlir/IR/Builders.h"
#include "parc/Support/InputFile.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

namespace mlir::parc {
#define GEN_PASS_DEF_APPLYPLANPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

/// The ops a function's "@N" keys name: the positioned ops and, by
/// position, recomputation's copies of them.
struct PlanPositions {
  SmallVector<Operation *> ops;
  llvm::DenseMap<int64_t, SmallVector<Operation *>> copies;
};

/// How many parameter servers `plan` asks for: by default one per
/// data-parallel rank.
static int64_t getServerCount(const Plan &plan) {
  return plan.dataParallel->servers.value_or(
      plan.getAxisSize("dp").value_or(1));
}

/// Whether `plan` asks for parameter servers on ranks of their own.
bool hasDedicatedServers(const Plan &plan) {
  return plan.dataParallel &&
         plan.dataParallel->sync == DataParallelSync::ParameterServer &&
         plan.dataParallel->placement == ServerPlacement::Dedicated;
}

struct ApplyPlanPass : public parc::impl::ApplyPlanPassBase<ApplyPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(apply()))
      signalPassFailure();
  }

  /// An error at the module: "PLANFILE: LINE:COL: ", without the location
  /// when it is unknown.
  InFlightDiagnostic error(json::Location location = {}) {
    InFlightDiagnostic diag = emitError(getOperation().getLoc())
                              << planFile << ": ";
    if (location.isKnown())
      diag << location.str() << ": ";
    return diag;
  }

  LogicalResult apply();
  LogicalResult checkBuilt(const Plan &plan);
  LogicalResult checkPrecision(const Plan &plan);
  FailureOr<dist::MeshOp> createMesh(const Plan &plan);
  LogicalResult applySharding(const NamedSharding &sharding, dist::MeshOp mesh,
                              ArrayRef<PlanPositions> positions);
  LogicalResult layOutModelState(const Plan &plan, dist::MeshOp mesh);
  LogicalResult markLocalSgd(const Plan &plan, dist::MeshOp mesh);
  LogicalResult groupBatchStatistics(const Plan &plan);
  LogicalResult recomputeActivations(const Plan &plan);
  LogicalResult addStaleVersions(const Plan &plan);
  LogicalResult splitMicrobatches(const Plan &plan, dist::MeshOp mesh);
  /// The plan's micro-batch count; by default one per stage.
  static int64_t getMicrobatchCount(const Plan &plan);
};

} // namespace

LogicalResult ApplyPlanPass::apply() {
  if (planFile.empty())
    return emitError(getOperation().getLoc())
           << "no plan file given: --parc-apply-plan=plan=FILE";
  auto buffer = readInputFile(planFile, "the plan", kMaxConfigFileBytes);
  if (!buffer)
    return emitError(getOperation().getLoc())
           << llvm::toString(buffer.takeError());
  llvm::Expected<Plan> plan = readPlan((*buffer)->getBuffer(), planFile);
  if (!plan) {
    InFlightDiagnostic diag = error();
    llvm::handleAllErrors(
        plan.takeError(),
        [&](const json::ReadError &readError) {
          diag << readError.getLocatedMessage();
        },
        [&](const llvm::ErrorInfoBase &other) { diag << other.message(); });
    return diag;
  }
  if (failed(checkBuilt(*plan)) || failed(checkPrecision(*plan)))
    return failure();
  // Shardings go on arguments that follow the model convention (static
  // tensors): checked here, since the pass may run without
  // --parc-verify-model.
  for (auto func : getOperation().getOps<func::FuncOp>())
    if (failed(readModelArguments(func)))
      return failure();
  FailureOr<dist::MeshOp> meshOp = createMesh(*plan);
  if (failed(meshOp))
    return failure();
  // Before the shardings: the recomputed copies of named ops are pinned
  // too, and under ZeRO-3 the ones that read a parameter gather it anew.
  if (failed(recomputeActivations(*plan)))
    return failure();
  // Pins add no parc op, so the positions hold for all of them.
  SmallVector<PlanPositions> positions;
  for (auto func : getOperation().getOps<func::FuncOp>())
    positions.push_back(
        {getPlanPositionedOps(func), getRecomputedCopies(func)});
  for (const NamedSharding &sharding : plan->shardings)
    if (failed(applySharding(sharding, *meshOp, positions)))
      return failure();
  if (failed(layOutModelState(*plan, *meshOp)) ||
      failed(markLocalSgd(*plan, *meshOp)) ||
      failed(groupBatchStatistics(*plan)))
    return failure();
  if (plan->pipeline &&
      plan->pipeline->schedule == PipelineSchedule::PipeDream2BW &&
      failed(addStaleVersions(*plan)))
    return failure();
  if (plan->pipeline)
    return splitMicrobatches(*plan, *meshOp);
  return success();
}

// The plan parts that readPlan accepts but parc-compile cannot build yet.
// `sequence_parallel` needs nothing here: the shardings of the named values
// express it.
LogicalResult ApplyPlanPass::checkBuilt(const Plan &plan) {
  const PlanLocations &at = plan.locations;
  if (const std::optional<PipelinePlan> &pipeline = plan.pipeline) {
    PipelineSchedule schedule =
        pipeline->schedule.value_or(PipelineSchedule::OneFOneB);
    int64_t virtualStages = pipeline->virtualStages.value_or(1);
    bool interleaved = schedule == PipelineSchedule::Interleaved1F1B;
    if (interleaved != (virtualStages > 1))
      return error(at.pipeline)
             << (interleaved ? "\"interleaved-1f1b\" needs \"virtual_stages\" "
                               "of at least 2"
                             : "\"virtual_stages\" > 1 needs the schedule "
                               "\"interleaved-1f1b\"");
    if (schedule == PipelineSchedule::PipeDream2BW && plan.zero.value_or(0) > 0)
      return error(at.zero) << "\"pipedream-2bw\" with ZeRO is not built";
    if (schedule == PipelineSchedule::PipeDream2BW &&
        plan.recompute.value_or(Recompute::None) != Recompute::None)
      return error(at.recompute)
             << "\"pipedream-2bw\" with recomputation is not built";
    if (interleaved && pipeline->layersPerStage)
      return error(at.pipeline)
             << "\"layers_per_stage\" cannot be given with interleaved "
                "stages: the layers split evenly into stages x virtual_stages "
                "chunks";
    for (const MeshAxis &axis : plan.mesh)
      if (axis.name == kMicrobatchAxis)
        return error(at.mesh) << "the mesh axis name '" << kMicrobatchAxis
                              << "' is reserved for the pipeline's "
                                 "micro-batches";
    for (const NamedSharding &sharding : plan.shardings)
      for (const std::vector<std::string> &dim : sharding.dims)
        if (llvm::is_contained(dim, pipeline->axis))
          return error(sharding.location)
                 << "'" << sharding.name << "' is sharded over the pipeline "
                 << "axis '" << pipeline->axis
                 << "', whose coordinates are stages";
  }
  if (const std::optional<DataParallelPlan> &dataParallel = plan.dataParallel) {
    bool localSgd = dataParallel->sync == DataParallelSync::LocalSgd;
    bool server = dataParallel->sync == DataParallelSync::ParameterServer;
    if (!server && (dataParallel->servers || dataParallel->placement))
      return error(at.dataParallel)
             << "\"servers\" and \"placement\" are for \"sync\": "
                "\"parameter-server\"";
    std::optional<int64_t> dp = plan.getAxisSize("dp");
    if (server) {
      ServerPlacement placement =
          dataParallel->placement.value_or(ServerPlacement::Colocated);
      int64_t servers = getServerCount(plan);
      if (!dp)
        return error(at.dataParallel)
               << "a parameter server serves the data-parallel ranks of the "
                  "mesh axis 'dp', which the mesh does not have";
      if (placement == ServerPlacement::Colocated && servers > *dp)
        return error(at.dataParallel)
               << servers << " colocated servers on " << *dp
               << " data-parallel ranks: each rank runs at most one server";
      if (plan.zero.value_or(0) > 0)
        return error(at.zero) << "a parameter server keeps the optimizer "
                                 "state on its servers; \"zero\" must be 0";
      if (placement == ServerPlacement::Dedicated) {
        if (servers > *dp || *dp % servers)
          return error(at.dataParallel)
                 << servers << " dedicated servers for " << *dp
                 << " data-parallel ranks are not built: parc builds a "
                    "number of servers that divides the data-parallel ranks "
                    "(parc-plan prices other counts)";
        if (plan.pipeline)
          return error(at.dataParallel)
                 << "dedicated parameter servers with a pipeline (or "
                    "gradient accumulation) are not built";
        for (const MeshAxis &axis : plan.mesh)
          if (axis.name == kServerAxis)
            return error(at.mesh)
                   << "the mesh axis name '" << kServerAxis
                   << "' is reserved for the dedicated parameter servers";
      } else if (servers < *dp) {
        return error(at.dataParallel)
               << servers << " colocated servers on " << *dp
               << " data-parallel ranks are not built yet: parc builds one "
                  "server per rank (parc-plan prices fewer)";
      }
    }
    if (!localSgd &&
        (dataParallel->syncEvery || dataParallel->averageOptimizerState))
      return error(at.dataParallel)
             << "\"sync_every\" and \"average_optimizer_state\" are for "
                "\"sync\": \"local-sgd\"";
    if (localSgd) {
      if (!dp)
        return error(at.dataParallel)
               << "local SGD trains a replica per coordinate of the mesh "
                  "axis 'dp', which the mesh does not have";
      if (plan.pipeline)
        return error(at.dataParallel)
               << "local SGD with a pipeline is not built";
      for (const NamedSharding &sharding : plan.shardings)
        for (const std::vector<std::string> &dim : sharding.dims)
          if (llvm::is_contained(dim, "dp"))
            return error(sharding.location)
                   << "'" << sharding.name
                   << "' is sharded over 'dp', but under local SGD each dp "
                      "rank holds a whole replica (the train step is written "
                      "at one replica's batch)";
      if (plan.zero.value_or(0) > 0)
        return error(at.zero) << "local SGD keeps a whole replica per rank, "
                                 "so it does not shard state with ZeRO";
      if (dataParallel->syncBatchNorm.value_or(false))
        return error(at.dataParallel)
               << "\"sync_batch_norm\" needs the replicas to step together "
                  "(\"allreduce\" or \"parameter-server\"); under local SGD "
                  "each replica's statistics are its own";
    }
  }
  if (plan.recomputeLayers && !plan.recomputeLayers->empty() &&
      plan.recompute.value_or(Recompute::Full) != Recompute::Full)
    return error(at.recomputeLayers)
           << "\"recompute_layers\" recomputes whole layers, which needs "
              "\"recompute\": \"full\", not \""
           << getRecomputeName(*plan.recompute) << "\"";
  return success();
}

// Mixed precision is decided before the gradients exist (MixedPrecision.h):
// the plan can only say what the train step is.
LogicalResult ApplyPlanPass::checkPrecision(const Plan &plan) {
  if (!plan.precision)
    return success();
  StringRef wanted = getPrecisionName(*plan.precision);
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    auto made = func->getAttrOfType<StringAttr>(kPrecisionAttrName);
    StringRef actual = made ? made.getValue() : "f32";
    if (actual == wanted)
      continue;
    InFlightDiagnostic diag = error(plan.locations.precision);
    diag << "\"precision\": \"" << wanted << "\", but @" << func.getName()
         << " computes in " << actual;
    if (*plan.precision != Precision::F32)
      diag << " (make a " << wanted << " train step with "
           << "--parc-make-train-step=precision=" << wanted << ")";
    return diag;
  }
  return success();
}

// Clipping scales the gradient in the update phase; the value before it
// (of the parameter's type) is what the backward pass produced.
static Value getBackwardGradient(OptimizerUpdateOpInterface update) {
  Value gradient = update.getParameterGradient();
  ArrayRef<int64_t> shape =
      cast<ShapedType>(update.getUpdatedParameter().getType()).getShape();
  // Through the update's scalings and its widening of a 16-bit gradient.
  while (Operation *producer = gradient.getDefiningOp()) {
    if (getPhase(producer) != Phase::Update)
      break;
    auto input = llvm::find_if(producer->getOperands(), [&](Value operand) {
      auto type = dyn_cast<ShapedType>(operand.getType());
      return type && type.getShape() == shape;
    });
    if (input == producer->operand_end())
      break;
    gradient = *input;
  }
  return gradient;
}

/// The ZeRO layout of a parameter of `type` laid out as `own`: `dp` added,
/// minor, on the first dimension whose shard `dp` divides; `own` itself when
/// `own` splits over dp already or no dimension divides. Axes the mesh lacks
/// count as 1 here; propagation reports them.
static SmallVector<Attribute> getZeroLayout(ShapedType type,
                                            ArrayRef<Attribute> own,
                                            dist::MeshOp mesh,
                                            StringAttr dpName, int64_t dp) {
  std::optional<unsigned> zeroDim;
  for (unsigned dim = 0; dim < own.size(); ++dim) {
    int64_t shard = type.getDimSize(dim);
    for (Attribute axis : cast<ArrayAttr>(own[dim])) {
      if (axis == dpName)
        return SmallVector<Attribute>(own);
      shard /= mesh.getAxisSize(cast<StringAttr>(axis).getValue()).value_or(1);
    }
    if (!zeroDim && shard % dp == 0)
      zeroDim = dim;
  }
  SmallVector<Attribute> zero(own);
  if (zeroDim) {
    SmallVector<Attribute> axes =
        llvm::to_vector(cast<ArrayAttr>(own[*zeroDim]).getValue());
    axes.push_back(dpName);
    zero[*zeroDim] = ArrayAttr::get(dpName.getContext(), axes);
  }
  return zero;
}

// Without ZeRO the optimizer state of a parameter the plan lays out (its
// moments and a mixed-precision step's f32 master) is laid out as the
// parameter, so propagation does not split a replicated parameter's state
// behind the plan's back (gathering it after every update).
// ZeRO: the optimizer state of each parameter is laid out in the ZeRO layout;
// at stage 3 the parameter is stored so too, and every op that reads it
// outside the update gets its own gathered copy (a constraint to the
// parameter's own layout right before the op), which dies after that op as in
// FSDP's FULL_SHARD. Stages 1 and 2 lay out alike and differ in when
// gradients are scattered.
LogicalResult ApplyPlanPass::layOutModelState(const Plan &plan,
                                              dist::MeshOp mesh) {
  // A parameter server with a server on every data-parallel rank, each
  // owning 1/dp of every tensor (BytePS's partitioning), is ZeRO-1's layout:
  // the push is a reduce-scatter, each server updates its part, the pull is
  // an all-gather.
  bool serverOnEveryRank =
      plan.dataParallel &&
      plan.dataParallel->sync == DataParallelSync::ParameterServer;
  int64_t stage = serverOnEveryRank ? 1 : plan.zero.value_or(0);
  std::optional<int64_t> dp = mesh.getAxisSize("dp");
  if (stage > 0 && !dp)
    return error(plan.locations.zero)
           << "\"zero\": " << stage
           << " shards model state over the mesh axis 'dp', which the mesh "
              "does not have";
  Builder builder(&getContext());
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  StringAttr dpName = builder.getStringAttr("dp");
  auto shardingOf = [&](ArrayRef<Attribute> dims,
                        ArrayRef<Attribute> partial = {}) {
    return dist::ShardingAttr::get(&getContext(), meshRef,
                                   builder.getArrayAttr(dims),
                                   builder.getArrayAttr(partial));
  };
  // Under a pipeline, stage 1 sums each gradient over the micro-batches
  // whole; stages 2 and 3 scatter each micro-batch's and sum the shards.
  SmallVector<Attribute> pendingSum = {dpName};
  SmallVector<Attribute> shardSum;
  if (plan.pipeline && stage >= 2) {
    pendingSum.push_back(builder.getStringAttr(kMicrobatchAxis));
    shardSum.push_back(builder.getStringAttr(kMicrobatchAxis));
  }
  bool anyUpdate = false;
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    auto isArgument = [&](Value value, StringRef role) {
      auto argument = dyn_cast<BlockArgument>(value);
      if (!argument || argument.getOwner() != &func.getBody().front())
        return false;
      auto attr = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                    ParcDialect::kRoleAttrName);
      return attr && attr.getValue() == role;
    };
    SmallVector<OptimizerUpdateOpInterface> updates;
    func.walk([&](OptimizerUpdateOpInterface op) { updates.push_back(op); });
    anyUpdate |= !updates.empty();
    // Dedicated servers: the program is the colocated one's, which
    // --parc-parameter-server cuts into the workers' and the servers'.
    if (hasDedicatedServers(plan) && !updates.empty()) {
      // f16's loss scale is state the workers read and every gradient's
      // finiteness updates.
      auto precision = func->getAttrOfType<StringAttr>(kPrecisionAttrName);
      if (precision && precision.getValue() == "f16-mixed")
        return error(plan.locations.dataParallel)
               << "dedicated parameter servers with dynamic loss scaling "
                  "(f16-mixed) are not built";
      func->setAttr(
          kParameterServerAttrName,
          builder.getDictionaryAttr(
              {builder.getNamedAttr("axis", builder.getStringAttr(kServerAxis)),
               builder.getNamedAttr("servers", builder.getI64IntegerAttr(
                                                   getServerCount(plan)))}));
    }
    for (OptimizerUpdateOpInterface update : updates) {
      Value updated = update.getUpdatedParameter();
      BlockArgument param = getSteppedParameter(func, updated);
      if (!param || !isArgument(param, "param"))
        continue;
      unsigned paramIndex = cast<BlockArgument>(param).getArgNumber();
      auto type = cast<ShapedType>(param.getType());
      auto pinned = func.getArgAttrOfType<dist::ShardingAttr>(
          paramIndex, dist::DistDialect::kPlanShardingAttrName);
      SmallVector<Attribute> own =
          pinned ? llvm::to_vector(pinned.getDims().getValue())
                 : SmallVector<Attribute>(type.getRank(),
                                          builder.getArrayAttr({}));
      if (stage == 0 && !pinned)
        continue;
      SmallVector<Attribute> zero =
          stage == 0 ? own : getZeroLayout(type, own, mesh, dpName, *dp);
      // The parameter keeps its own layout below stage 3: pinning it keeps
      // the state's split from spreading to it.
      func.setArgAttr(paramIndex, dist::DistDialect::kPlanShardingAttrName,
                      shardingOf(stage >= 3 ? zero : own));
      // A mixed-precision step's f32 master copy is optimizer state too.
      SmallVector<Value> states = llvm::to_vector(update.getParameterState());
      if (updated != param)
        states.push_back(updated);
      for (Value state : states) {
        if (!isArgument(state, "optstate"))
          continue;
        unsigned index = cast<BlockArgument>(state).getArgNumber();
        if (!func.getArgAttr(index, dist::DistDialect::kPlanShardingAttrName))
          func.setArgAttr(index, dist::DistDialect::kPlanShardingAttrName,
                          shardingOf(zero));
      }
      if (zero == own)
        continue;
      // The gradient as the backward pass leaves it is held whole, its sum
      // over dp pending (which also keeps the split from spreading into the
      // backward pass), and scattered where the update first reads it at
      // stage 1, at once at stages 2 and 3.
      Value gradient = getBackwardGradient(update);
      OpBuilder after(&getContext());
      after.setInsertionPointAfterValue(gradient);
      auto pending = dist::ConstraintOp::create(
          after, gradient.getLoc(), gradient, shardingOf(own, pendingSum));
      setPhase(pending, Phase::Backward);
      gradient.replaceAllUsesExcept(pending, pending);
      OpBuilder scatterAt(&getContext());
      if (stage == 1)
        scatterAt.setInsertionPoint(*llvm::min_element(
            pending->getUsers(),
            [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); }));
      else
        scatterAt.setInsertionPointAfter(pending);
      auto shard = dist::ConstraintOp::create(
          scatterAt, gradient.getLoc(), pending, shardingOf(zero, shardSum));
      setPhase(shard, stage == 1 ? Phase::Update : Phase::Backward);
      pending.getResult().replaceAllUsesExcept(shard, shard);
      for (dist::ConstraintOp pinned : {pending, shard})
        pinned->setAttr(dist::DistDialect::kFromPlanAttrName,
                        builder.getUnitAttr());
      if (stage < 3)
        continue;
      SetVector<Operation *> readers;
      for (Operation *user : param.getUsers())
        if (user != update.getOperation())
          readers.insert(user);
      for (Operation *reader : readers) {
        OpBuilder before(reader);
        auto gathered = dist::ConstraintOp::create(before, reader->getLoc(),
                                                   param, shardingOf(own));
        gathered->setAttr(dist::DistDialect::kFromPlanAttrName,
                          before.getUnitAttr());
        gathered->setAttr(dist::DistDialect::kPerUseAttrName,
                          before.getUnitAttr());
        // Gathered in its reader's pass: a pipeline emits a backward
        // reader's gather with the backward pass, not at the forward's end.
        if (Attribute phase = reader->getAttr(kPhaseAttrName))
          gathered->setAttr(kPhaseAttrName, phase);
        reader->replaceUsesOfWith(param, gathered);
      }
    }
  }
  if (serverOnEveryRank && !anyUpdate)
    return error(plan.locations.dataParallel)
           << "a parameter server updates a train step's parameters, but the "
              "model has no optimizer update (make one with "
              "--parc-make-train-step)";
  if (stage > 0 && !anyUpdate)
    return error(plan.locations.zero)
           << "\"zero\": " << stage
           << " shards a train step's optimizer state, gradients and "
              "parameters, but the model has no optimizer update (make one "
              "with --parc-make-train-step)";
  return success();
}

// Local SGD marks the train steps; --parc-local-sgd makes them a replica's
// after partitioning.
LogicalResult ApplyPlanPass::markLocalSgd(const Plan &plan, dist::MeshOp mesh) {
  if (!plan.dataParallel ||
      plan.dataParallel->sync != DataParallelSync::LocalSgd)
    return success();
  LocalSgdConfig config{
      "dp", plan.dataParallel->syncEvery.value_or(1),
      plan.dataParallel->averageOptimizerState.value_or(false)};
  bool marked = false;
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    bool steps = false, masters = false;
    func.walk([&](OptimizerUpdateOpInterface update) {
      steps = true;
      Value updated = update.getUpdatedParameter();
      masters |= getSteppedParameter(func, updated) != updated;
    });
    if (!steps)
      continue;
    // The replicas' weights would be their f32 masters, and the bf16 copies
    // the step rounds from them must follow the averaged masters.
    if (masters)
      return error(plan.locations.dataParallel)
             << "local SGD with mixed precision (f32 master weights) is not "
                "built";
    func->setAttr(kLocalSgdAttrName, getLocalSgdAttr(&getContext(), config));
    marked = true;
    // The step runs on the mesh even when the plan shards nothing (a
    // replica per rank): its data is pinned whole where the plan is silent.
    FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
    if (failed(arguments))
      return failure();
    for (const ModelArgument &argument : *arguments)
      if ((argument.role == ArgumentRole::Input ||
           argument.role == ArgumentRole::Label) &&
          !func.getArgAttr(argument.index,
                           dist::DistDialect::kPlanShardingAttrName))
        func.setArgAttr(
            argument.index, dist::DistDialect::kPlanShardingAttrName,
            TensorSharding::replicated(argument.type.getRank())
                .toAttr(&getContext(),
                        FlatSymbolRefAttr::get(mesh.getSymNameAttr())));
  }
  if (!marked)
    return error(plan.locations.dataParallel)
           << "local SGD averages replicas of a train step, but the model "
              "has no optimizer update (make one with "
              "--parc-make-train-step)";
  return success();
}

// PyTorch DDP normalizes each rank's part of the batch by its own
// statistics: batch_norm's groups become the dp ranks, so the serial model
// is the one the ranks compute. SyncBatchNorm keeps the whole batch's; under
// local SGD the step is one replica's already. An op the model wrote with
// groups of its own keeps them.
LogicalResult ApplyPlanPass::groupBatchStatistics(const Plan &plan) {
  const std::optional<DataParallelPlan> &dataParallel = plan.dataParallel;
  int64_t dp = plan.getAxisSize("dp").value_or(1);
  if (dp == 1 ||
      (dataParallel && (dataParallel->syncBatchNorm.value_or(false) ||
                        dataParallel->sync == DataParallelSync::LocalSgd)))
    return success();
  auto group = [&](auto op) {
    if (op.getGroups() != 1)
      return WalkResult::advance();
    int64_t batch = op.getInput().getType().getDimSize(0);
    if (batch % dp != 0) {
      InFlightDiagnostic diag =
          error(dataParallel ? plan.locations.dataParallel
                             : plan.locations.mesh)
          << "batch normalization uses each of the " << dp
          << " dp ranks' statistics (PyTorch DDP's), but its batch of " << batch
          << " does not split into " << dp
          << " equal parts; \"data_parallel\": {\"sync_batch_norm\": true} "
             "uses the whole batch's";
      diag.attachNote(op.getLoc()) << "the batch normalization";
      return WalkResult::interrupt();
    }
    op.setGroups(dp);
    return WalkResult::advance();
  };
  WalkResult walk = getOperation().walk([&](Operation *op) {
    if (auto batchNorm = dyn_cast<BatchNormOp>(op))
      return group(batchNorm);
    if (auto grad = dyn_cast<BatchNormGradOp>(op))
      return group(grad);
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

// "full" and "selective" recompute every layer, "recompute_layers" only the
// listed ones (in full).
LogicalResult ApplyPlanPass::recomputeActivations(const Plan &plan) {
  Recompute mode = plan.recompute.value_or(Recompute::None);
  bool listed = plan.recomputeLayers && !plan.recomputeLayers->empty();
  if (mode == Recompute::None && !listed)
    return success();
  json::Location at =
      listed ? plan.locations.recomputeLayers : plan.locations.recompute;
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    std::set<int64_t> layers =
        listed ? std::set<int64_t>(plan.recomputeLayers->begin(),
                                   plan.recomputeLayers->end())
               : getLayerIndices(func);
    if (failed(recomputeLayers(func, layers,
                               mode == Recompute::Selective
                                   ? RecomputeGranularity::Selective
                                   : RecomputeGranularity::Full,
                               [&] { return error(at); })))
      return failure();
  }
  return success();
}

// PipeDream-2BW: the train step reads the stale weights (StaleWeights.h).
// Two versions suffice when every stage's in-flight micro-batches fit in
// one step (micro-batches >= stages), as in the paper.
LogicalResult ApplyPlanPass::addStaleVersions(const Plan &plan) {
  int64_t stages = 1;
  for (const MeshAxis &axis : plan.mesh)
    if (axis.name == plan.pipeline->axis)
      stages = axis.size;
  int64_t microbatches = getMicrobatchCount(plan);
  if (microbatches < stages)
    return error(plan.locations.pipeline)
           << "\"pipedream-2bw\" needs at least as many micro-batches as "
              "stages (two weight versions cover the micro-batches in flight "
              "only then); \"microbatches\": "
           << microbatches << " < " << stages << " stages";
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    bool trains = false;
    func.walk([&](OptimizerUpdateOpInterface) { trains = true; });
    if (!trains)
      return error(plan.locations.pipeline)
             << "\"pipedream-2bw\" needs a train step (its stale weights are "
                "the optimizer's), and @"
             << func.getSymName()
             << " has no optimizer update (make one with "
                "--parc-make-train-step)";
    if (failed(addStaleWeightVersions(func)))
      return failure();
  }
  return success();
}

int64_t ApplyPlanPass::getMicrobatchCount(const Plan &plan) {
  if (plan.pipeline->microbatches)
    return *plan.pipeline->microbatches;
  for (const MeshAxis &axis : plan.mesh)
    if (axis.name == plan.pipeline->axis)
      return axis.size;
  return 1;
}

// Every input's and label's first dimension (the batch) gets the
// micro-batch axis after the axes the plan splits it over.
LogicalResult ApplyPlanPass::splitMicrobatches(const Plan &plan,
                                               dist::MeshOp mesh) {
  const PipelinePlan &pipeline = *plan.pipeline;
  int64_t microbatches = getMicrobatchCount(plan);
  Builder builder(&getContext());
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
    if (failed(arguments))
      return failure();
    for (const ModelArgument &argument : *arguments) {
      if (argument.role != ArgumentRole::Input &&
          argument.role != ArgumentRole::Label)
        continue;
      if (argument.type.getRank() == 0)
        return error(plan.locations.pipeline)
               << "the pipeline splits every input's batch (first dimension) "
                  "into micro-batches, but '"
               << argument.name << "' is a scalar";
      auto pinned = func.getArgAttrOfType<dist::ShardingAttr>(
          argument.index, dist::DistDialect::kPlanShardingAttrName);
      SmallVector<Attribute> dims =
          pinned ? llvm::to_vector(pinned.getDims().getValue())
                 : SmallVector<Attribute>(argument.type.getRank(),
                                          builder.getArrayAttr({}));
      SmallVector<Attribute> batchAxes =
          llvm::to_vector(cast<ArrayAttr>(dims[0]).getValue());
      int64_t shards = 1;
      for (Attribute axis : batchAxes)
        shards *= *mesh.getAxisSize(cast<StringAttr>(axis).getValue());
      int64_t batch = argument.type.getDimSize(0);
      if (batch % (shards * microbatches) != 0)
        return error(plan.locations.pipeline)
               << "\"microbatches\": " << microbatches
               << " do not divide the batch of '" << argument.name << "' ("
               << batch
               << (shards > 1
                       ? " over " + std::to_string(shards) +
                             " data-parallel shards, " +
                             std::to_string(batch / shards) + " per shard"
                       : std::string())
               << ")";
      batchAxes.push_back(builder.getStringAttr(kMicrobatchAxis));
      dims[0] = builder.getArrayAttr(batchAxes);
      func.setArgAttr(argument.index, dist::DistDialect::kPlanShardingAttrName,
                      dist::ShardingAttr::get(&getContext(), meshRef,
                                              builder.getArrayAttr(dims),
                                              builder.getArrayAttr({})));
    }
    // Values the plan pins carry the micro-batch axis on their batch
    // dimension too, or partitioning would gather them over it.
    SmallVector<std::pair<Value, SmallVector<bool>>> batches;
    for (const ModelArgument &argument : *arguments)
      if (argument.role == ArgumentRole::Input ||
          argument.role == ArgumentRole::Label) {
        SmallVector<bool> dims(argument.type.getRank(), false);
        dims[0] = true;
        batches.push_back({func.getArgument(argument.index), dims});
      }
    DimensionFlow flow = followDimensions(func.getBody().front(), batches);
    WalkResult walk = func.walk([&](dist::ConstraintOp pinned) {
      if (!pinned->hasAttr(dist::DistDialect::kFromPlanAttrName))
        return WalkResult::advance();
      auto it = flow.dims.find(pinned.getInput());
      if (it == flow.dims.end() || !llvm::is_contained(it->second, true))
        return WalkResult::advance();
      unsigned dim = llvm::find(it->second, true) - it->second.begin();
      dist::ShardingAttr sharding = pinned.getSharding();
      SmallVector<Attribute> dims =
          llvm::to_vector(sharding.getDims().getValue());
      SmallVector<Attribute> axes =
          llvm::to_vector(cast<ArrayAttr>(dims[dim]).getValue());
      int64_t shards = microbatches;
      for (Attribute axis : axes)
        shards *= *mesh.getAxisSize(cast<StringAttr>(axis).getValue());
      if (pinned.getType().getDimSize(dim) % shards != 0) {
        error(plan.locations.pipeline)
            << "\"microbatches\": " << microbatches
            << " do not divide the batch dimension of a value the plan pins ("
            << pinned.getType() << ", dimension " << dim << ")";
        return WalkResult::interrupt();
      }
      axes.push_back(builder.getStringAttr(kMicrobatchAxis));
      dims[dim] = builder.getArrayAttr(axes);
      pinned.setShardingAttr(dist::ShardingAttr::get(
          &getContext(), sharding.getMesh(), builder.getArrayAttr(dims),
          sharding.getPartial()));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    std::set<int64_t> layers = getLayerIndices(func);
    std::optional<SmallVector<int64_t>> given;
    if (pipeline.layersPerStage)
      given.emplace(pipeline.layersPerStage->begin(),
                    pipeline.layersPerStage->end());
    int64_t stages = *mesh.getAxisSize(pipeline.axis);
    int64_t virtualStages = pipeline.virtualStages.value_or(1);
    if (virtualStages > 1) {
      int64_t chunks = stages * virtualStages;
      if (microbatches % stages != 0)
        return error(plan.locations.pipeline)
               << "interleaved stages need micro-batches in groups of the "
               << stages << " stages; \"microbatches\": " << microbatches
               << " is not a multiple";
      if (layers.empty() || int64_t(layers.size()) % chunks != 0)
        return error(plan.locations.pipeline)
               << "the model's " << layers.size()
               << " layers do not split evenly into " << stages << " stages x "
               << virtualStages << " virtual stages";
    }
    llvm::Expected<SmallVector<int64_t>> perStage =
        getLayersPerStage(stages * virtualStages, layers.size(), given);
    if (!perStage)
      return error(plan.locations.pipeline)
             << llvm::toString(perStage.takeError());
    SmallVector<NamedAttribute> attrs = {
        builder.getNamedAttr("axis", builder.getStringAttr(pipeline.axis)),
        builder.getNamedAttr("microbatch_axis",
                             builder.getStringAttr(kMicrobatchAxis)),
        builder.getNamedAttr("microbatches",
                             builder.getI64IntegerAttr(microbatches)),
        builder.getNamedAttr(
            "schedule",
            builder.getStringAttr(getPipelineScheduleName(
                pipeline.schedule.value_or(PipelineSchedule::OneFOneB))))};
    if (virtualStages > 1)
      attrs.push_back(builder.getNamedAttr(
          "virtual_stages", builder.getI64IntegerAttr(virtualStages)));
    if (pipeline.layersPerStage)
      attrs.push_back(builder.getNamedAttr(
          "layers_per_stage",
          builder.getDenseI64ArrayAttr(*pipeline.layersPerStage)));
    func->setAttr(kPipelineAttrName, builder.getDictionaryAttr(attrs));
  }
  return success();
}

FailureOr<dist::MeshOp> ApplyPlanPass::createMesh(const Plan &plan) {
  OpBuilder builder(&getContext());
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  for (const MeshAxis &axis : plan.mesh) {
    names.push_back(builder.getStringAttr(axis.name));
    sizes.push_back(axis.size);
  }
  if (plan.pipeline) {
    names.push_back(builder.getStringAttr(kMicrobatchAxis));
    sizes.push_back(getMicrobatchCount(plan));
  }
  if (hasDedicatedServers(plan)) {
    names.insert(names.begin(), builder.getStringAttr(kServerAxis));
    sizes.insert(sizes.begin(), 2);
  }
  ModuleOp module = getOperation();
  if (auto existing = module.lookupSymbol<dist::MeshOp>("mesh")) {
    if (existing.getAxisNames() != builder.getArrayAttr(names) ||
        existing.getAxisSizes() != ArrayRef<int64_t>(sizes))
      return error(plan.locations.mesh)
             << "the module already has a different @mesh";
    return existing;
  }
  builder.setInsertionPointToStart(module.getBody());
  return dist::MeshOp::create(builder, module.getLoc(), "mesh",
                              builder.getArrayAttr(names),
                              builder.getDenseI64ArrayAttr(sizes));
}

LogicalResult ApplyPlanPass::applySharding(const NamedSharding &planSharding,
                                           dist::MeshOp mesh,
                                           ArrayRef<PlanPositions> positions) {
  // readPlan has checked that every axis is a mesh axis.
  Builder builder(&getContext());
  const std::string &name = planSharding.name;
  json::Location location = planSharding.location;
  SmallVector<Attribute> dimAttrs;
  for (const std::vector<std::string> &axes : planSharding.dims) {
    SmallVector<Attribute> axisAttrs;
    for (const std::string &axis : axes)
      axisAttrs.push_back(builder.getStringAttr(axis));
    dimAttrs.push_back(builder.getArrayAttr(axisAttrs));
  }
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  dist::ShardingAttr sharding = dist::ShardingAttr::getChecked(
      [&] { return error(location) << "the sharding of '" << name << "': "; },
      &getContext(), meshRef, builder.getArrayAttr(dimAttrs),
      builder.getArrayAttr({}));
  if (!sharding)
    return failure();

  bool found = false;
  SmallVector<Operation *> namedOps;
  // "@N" names the N-th positioned op (getPlanPositionedOps) for the values
  // that have no parc.name: the planner pins them so. "@N:K" names operand
  // K of that op: the op reads it so, whatever layout its producer has.
  StringRef position = name;
  int64_t opIndex;
  std::optional<unsigned> operandIndex;
  if (position.consume_front("@")) {
    auto [opPart, operandPart] = position.split(':');
    bool namesOperand = opPart.size() != position.size();
    unsigned operand = 0;
    if (opPart.getAsInteger(10, opIndex) ||
        (namesOperand && operandPart.getAsInteger(10, operand)))
      return error(location)
             << "the plan shards '" << name
             << "': a key '@' must name an op by position, '@N', or one of "
                "its operands, '@N:K'";
    if (namesOperand)
      operandIndex = operand;
    for (const PlanPositions &function : positions) {
      ArrayRef<Operation *> ops = function.ops;
      if (opIndex < 0 || opIndex >= int64_t(ops.size()) ||
          (operandIndex ? *operandIndex >= ops[opIndex]->getNumOperands()
                        : ops[opIndex]->getNumResults() == 0))
        continue;
      namedOps.push_back(ops[opIndex]);
      llvm::append_range(namedOps, function.copies.lookup(opIndex));
    }
    if (namedOps.empty())
      return error(location)
             << "the plan shards '" << name
             << "', but the model has no parc op #" << opIndex
             << (operandIndex
                     ? " with an operand #" + std::to_string(*operandIndex)
                     : std::string(" with a result"));
  } else {
    getOperation().walk([&](Operation *op) {
      auto opName = op->getAttrOfType<StringAttr>(ParcDialect::kNameAttrName);
      if (opName && opName.getValue() == name && op->getNumResults() > 0)
        namedOps.push_back(op);
    });
  }
  for (Operation *op : namedOps) {
    found = true;
    Value value =
        operandIndex ? op->getOperand(*operandIndex) : op->getResult(0);
    if (failed(dist::verifyShardingForType(
            sharding, cast<ShapedType>(value.getType()), mesh, "'" + name + "'",
            [&] { return error(location); })))
      return failure();
    OpBuilder builder(op->getContext());
    if (operandIndex)
      builder.setInsertionPoint(op);
    else
      builder.setInsertionPointAfter(op);
    auto pinned =
        dist::ConstraintOp::create(builder, op->getLoc(), value, sharding);
    pinned->setAttr(dist::DistDialect::kFromPlanAttrName,
                    builder.getUnitAttr());
    if (operandIndex) {
      pinned->setAttr(dist::DistDialect::kPlanUseAttrName,
                      builder.getUnitAttr());
      // Resharded in its reader's pass, as ZeRO-3's gather before it.
      if (Attribute phase = op->getAttr(kPhaseAttrName))
        pinned->setAttr(kPhaseAttrName, phase);
      op->setOperand(*operandIndex, pinned);
    } else {
      value.replaceAllUsesExcept(pinned, pinned);
    }
  }
  for (auto func : getOperation().getOps<func::FuncOp>())
    for (unsigned index = 0; index < func.getNumArguments(); ++index) {
      auto argName =
          func.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
      if (!argName || argName.getValue() != name)
        continue;
      found = true;
      auto type = cast<ShapedType>(func.getArgument(index).getType());
      if (failed(dist::verifyShardingForType(sharding, type, mesh,
                                             "'" + name + "'",
                                             [&] { return error(location); })))
        return failure();
      func.setArgAttr(index, dist::DistDialect::kPlanShardingAttrName,
                      sharding);
    }
  if (!found)
    return error(location) << "the plan shards '" << name
                           << "', which names no argument or op (parc.name)";
  return success();
}
