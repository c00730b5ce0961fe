//===- Partition.cpp - per-rank programs with collectives -----------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcInterfaces.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/FactorSharding.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/Recompute.h"
#include "parc/Transforms/Resharding.h"
#include "parc/Transforms/ShardingAnnotations.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::parc {
#define GEN_PASS_DEF_PARTITIONPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

/// A whole value as a pending sum over `axes`: the first rank of each group
/// keeps it and the others hold zeros, an exact sum. ZeRO pins each gradient
/// as a pending sum, and a backward pass may compute one whole (batch norm's,
/// from statistics of the whole batch).
static Value keepOnFirstRanks(OpBuilder &b, Location loc, dist::MeshOp mesh,
                              Value value, ArrayRef<StringAttr> axes) {
  auto index = RankedTensorType::get({}, b.getI64Type());
  Value coordinate = dist::AxisIndexOp::create(
      b, loc, index, FlatSymbolRefAttr::get(mesh.getSymNameAttr()),
      b.getArrayAttr(SmallVector<Attribute>(axes.begin(), axes.end())));
  Value first = ConstantOp::create(
      b, loc, DenseElementsAttr::get(index, b.getI64IntegerAttr(0)));
  Value isFirst = CompareOp::create(
      b, loc,
      ComparisonPredicateAttr::get(b.getContext(), ComparisonPredicate::Eq),
      coordinate, first);
  Type element = cast<ShapedType>(value.getType()).getElementType();
  auto scalar = RankedTensorType::get({}, element);
  Value zero = ConstantOp::create(
      b, loc, DenseElementsAttr::get(scalar, b.getZeroAttr(element)));
  return SelectOp::create(b, loc, isFirst, value, zero);
}

namespace {

class Partitioner {
public:
  Partitioner(func::FuncOp func, dist::MeshOp mesh)
      : func(func), mesh(mesh), builder(func.getContext()) {}

  LogicalResult run();

private:
  /// The local value of `global` laid out as `to`, for a use by `user`.
  FailureOr<Value> localOperand(Operation *user, Value global,
                                const TensorSharding &to);
  FactorAxes resolveFactors(Operation *op, const ShardingRule &rule);
  LogicalResult partitionOp(Operation *op, ShardingRuleOpInterface ruleOp);

  func::FuncOp func;
  dist::MeshOp mesh;
  OpBuilder builder;
  IRMapping mapping;
  /// The layout of each global value's local counterpart.
  llvm::DenseMap<Value, TensorSharding> layouts;
  /// Local values already resharded, by global value, layout and whether
  /// recomputed ops use them.
  llvm::DenseMap<std::tuple<Value, Attribute, unsigned>, Value> resharded;
};

/// The local ops and collectives built for a global op while this lives keep
/// that op's phase tag and per-use mark.
class BuiltOpTags {
public:
  BuiltOpTags(OpBuilder &builder, Operation *global)
      : block(builder.getInsertionBlock()),
        lastBefore(block->empty() ? nullptr : &block->back()),
        phase(global->getAttr(kPhaseAttrName)),
        perUse(global->hasAttr(dist::DistDialect::kPerUseAttrName)) {}
  ~BuiltOpTags() {
    Operation *built = lastBefore       ? lastBefore->getNextNode()
                       : block->empty() ? nullptr
                                        : &block->front();
    for (; built; built = built->getNextNode()) {
      if (phase)
        built->setAttr(kPhaseAttrName, phase);
      if (perUse)
        built->setAttr(dist::DistDialect::kPerUseAttrName,
                       UnitAttr::get(built->getContext()));
    }
  }

private:
  Block *block;
  Operation *lastBefore;
  Attribute phase;
  bool perUse;
};

} // namespace

static TensorSharding replicatedFor(Value value) {
  return TensorSharding::replicated(
      cast<ShapedType>(value.getType()).getRank());
}

FailureOr<Value> Partitioner::localOperand(Operation *user, Value global,
                                           const TensorSharding &to) {
  // Uses that want the same layout share one resharding, except that ops
  // recomputed in the backward pass reshard again there: reusing the
  // forward's result would keep it alive until then, the memory that
  // recomputation frees.
  auto key = std::make_tuple(
      global,
      Attribute(to.toAttr(builder.getContext(),
                          FlatSymbolRefAttr::get(mesh.getSymNameAttr()))),
      unsigned(user->hasAttr(kRecomputedAttrName)));
  if (Value cached = resharded.lookup(key))
    return cached;
  FailureOr<Value> local =
      reshard(builder, user->getLoc(), mesh, mapping.lookup(global),
              cast<RankedTensorType>(global.getType()), layouts.at(global), to);
  if (succeeded(local))
    resharded[key] = *local;
  return local;
}

/// Parallel factors come from the recorded result layouts; factors only the
/// operands span (reductions) from an operand the plan pins at this use
/// (whole included: the plan asks this reader to take it so), else from the
/// first operand that splits them.
FactorAxes Partitioner::resolveFactors(Operation *op,
                                       const ShardingRule &rule) {
  SmallVector<TensorSharding> layoutsOfTensors;
  for (Value operand : op->getOperands())
    layoutsOfTensors.push_back(layouts.at(operand));
  for (Value result : op->getResults())
    layoutsOfTensors.push_back(
        getRecordedSharding(result).value_or(replicatedFor(result)));
  SmallVector<const TensorSharding *> shardings;
  for (const TensorSharding &layout : layoutsOfTensors)
    shardings.push_back(&layout);
  SmallVector<FactorClaim> claims = collectFactorClaims(rule, shardings, mesh);

  unsigned numOperands = op->getNumOperands();
  FactorAxes factors(rule.getFactors().size());
  llvm::SmallDenseSet<int64_t> decided;
  for (const FactorClaim &claim : claims)
    if (claim.tensor >= numOperands) {
      decided.insert(claim.factor);
      if (factors[claim.factor].empty())
        factors[claim.factor] = claim.axes;
    }
  auto pinnedAtUse = [&](unsigned operand) {
    auto pin = op->getOperand(operand).getDefiningOp<dist::ConstraintOp>();
    return pin && pin->hasAttr(dist::DistDialect::kPlanUseAttrName);
  };
  for (const FactorClaim &claim : claims)
    if (claim.tensor < numOperands && pinnedAtUse(claim.tensor) &&
        decided.insert(claim.factor).second)
      factors[claim.factor] = claim.axes;
  for (const FactorClaim &claim : claims)
    if (claim.tensor < numOperands && !decided.contains(claim.factor) &&
        factors[claim.factor].empty())
      factors[claim.factor] = claim.axes;
  legalizeFactorAxes(rule, factors, mesh);
  return factors;
}

LogicalResult Partitioner::partitionOp(Operation *op,
                                       ShardingRuleOpInterface ruleOp) {
  ShardingRule rule = ruleOp.getShardingRule();
  FactorAxes factors = resolveFactors(op, rule);

  // An op linear in all operands passes pending sums through when every
  // operand is pending over the same axes: the all_reduce moves past it
  // (not past a widening cast: SumsPartialsOpInterface).
  auto linear = dyn_cast<SumsPartialsOpInterface>(op);
  AxisList deferred;
  if (linear && linear.defersPendingSums()) {
    deferred = layouts.at(op->getOperand(0)).partial;
    for (Value operand : op->getOperands())
      if (layouts.at(operand).partial != deferred)
        deferred.clear();
    // A pending sum cannot stay over an axis that now splits a dimension.
    for (const TensorFactors *tensor : rule.getTensors())
      for (const DimFactors &dim : *tensor)
        for (int64_t factor : dim)
          if (llvm::any_of(factors[factor], [&](StringAttr axis) {
                return llvm::is_contained(deferred, axis);
              }))
            deferred.clear();
  }

  BuiltOpTags keepTags(builder, op);

  SmallVector<Value> operands;
  for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
    TensorSharding wanted = deriveTensorSharding(
        rule, rule.getOperands()[index], factors, /*isResult=*/false);
    wanted.partial = deferred;
    FailureOr<Value> local = localOperand(op, operand, wanted);
    if (failed(local))
      return failure();
    operands.push_back(*local);
  }
  SmallVector<TensorSharding> results;
  for (const TensorFactors &result : rule.getResults()) {
    results.push_back(
        deriveTensorSharding(rule, result, factors, /*isResult=*/true));
    llvm::append_range(results.back().partial, deferred);
  }

  SmallVector<Value> localResults;
  if (auto local = dyn_cast<LocalPartitionOpInterface>(op)) {
    FailureOr<SmallVector<Value>> built =
        local.buildLocalOp(builder, operands, factors, mesh, results);
    if (failed(built))
      return failure();
    localResults = *built;
  } else {
    for (auto [factor, axes] : llvm::enumerate(factors))
      if (!axes.empty() && rule.getFactors()[factor].needsLocalRewrite)
        return op->emitOpError("has a sharded factor that needs a local "
                               "form, but no LocalPartitionOpInterface");
    localResults = cloneOnLocalShapes(builder, op, operands, results, mesh);
  }
  for (auto [global, local, layout] :
       llvm::zip_equal(op->getResults(), localResults, results)) {
    mapping.map(global, local);
    layouts[global] = layout;
  }
  return success();
}

LogicalResult Partitioner::run() {
  Block &body = func.getBody().front();
  auto *localBody = new Block();
  for (BlockArgument argument : body.getArguments()) {
    TensorSharding layout =
        getRecordedSharding(argument).value_or(replicatedFor(argument));
    BlockArgument local = localBody->addArgument(
        layout.getLocalType(cast<RankedTensorType>(argument.getType()), mesh),
        argument.getLoc());
    mapping.map(argument, local);
    layouts[argument] = layout;
  }
  builder.setInsertionPointToEnd(localBody);

  auto fail = [&]() {
    delete localBody;
    return failure();
  };
  SmallVector<Type> resultTypes;
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
        TensorSharding wanted = getResultSharding(func, index);
        FailureOr<Value> local = localOperand(ret, operand, wanted);
        if (failed(local))
          return fail();
        results.push_back(*local);
        resultTypes.push_back(local->getType());
        func.setResultAttr(
            index, dist::DistDialect::kShardingAttrName,
            wanted.toAttr(func.getContext(),
                          FlatSymbolRefAttr::get(mesh.getSymNameAttr())));
      }
      func::ReturnOp::create(builder, ret.getLoc(), results);
      continue;
    }
    if (auto constraint = dyn_cast<dist::ConstraintOp>(op)) {
      TensorSharding pinned =
          TensorSharding::fromAttr(constraint.getSharding());
      // Each constraint reshards where it stands, never sharing an earlier
      // one's copy: ZeRO-3 gathers a parameter anew for every reader, so
      // the copy dies after it.
      Value input = constraint.getInput();
      FailureOr<Value> local = failure();
      {
        // Done with the built ops before fail() frees them.
        BuiltOpTags keepTags(builder, constraint);
        Value value = mapping.lookup(input);
        TensorSharding from = layouts.at(input);
        AxisList summed;
        for (StringAttr axis : pinned.partial)
          if (!from.usesAxis(axis))
            summed.push_back(axis);
        if (!summed.empty()) {
          value = keepOnFirstRanks(builder, constraint.getLoc(), mesh, value,
                                   summed);
          llvm::append_range(from.partial, summed);
        }
        local = reshard(builder, constraint.getLoc(), mesh, value,
                        cast<RankedTensorType>(input.getType()), from, pinned);
      }
      if (failed(local))
        return fail();
      mapping.map(constraint.getResult(), *local);
      layouts[constraint.getResult()] = pinned;
      continue;
    }
    auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
    if (!ruleOp) {
      op.emitOpError("has no sharding rule, so it cannot be partitioned");
      return fail();
    }
    if (failed(partitionOp(&op, ruleOp)))
      return fail();
  }

  // Swap in the local body; the global one's values are no longer used.
  body.dropAllDefinedValueUses();
  body.erase();
  func.getBody().push_back(localBody);
  func.setFunctionType(
      builder.getFunctionType(localBody->getArgumentTypes(), resultTypes));
  func->setAttr("dist.partitioned", builder.getUnitAttr());
  return success();
}

/// Checks the layouts recorded in the IR (by propagation, or written by
/// hand) before partitioning trusts them.
static LogicalResult verifyRecordedShardings(func::FuncOp func,
                                             dist::MeshOp mesh) {
  for (BlockArgument argument : func.getArguments())
    if (auto attr = func.getArgAttrOfType<dist::ShardingAttr>(
            argument.getArgNumber(), dist::DistDialect::kShardingAttrName))
      if (failed(dist::verifyShardingForType(
              attr, cast<ShapedType>(argument.getType()), mesh,
              "argument #" + std::to_string(argument.getArgNumber()),
              [&] { return emitError(argument.getLoc()); })))
        return failure();
  WalkResult result = func.walk([&](Operation *op) {
    auto attrs = op->getAttrOfType<ArrayAttr>(kOpShardingsAttrName);
    if (!attrs)
      return WalkResult::advance();
    if (attrs.size() != op->getNumResults()) {
      op->emitOpError() << "has " << attrs.size() << " entries in '"
                        << kOpShardingsAttrName << "' for "
                        << op->getNumResults() << " results";
      return WalkResult::interrupt();
    }
    for (auto [index, attr] : llvm::enumerate(attrs)) {
      auto sharding = dyn_cast<dist::ShardingAttr>(attr);
      if (!sharding ||
          failed(dist::verifyShardingForType(
              sharding, cast<ShapedType>(op->getResult(index).getType()), mesh,
              "result #" + std::to_string(index),
              [&] { return op->emitOpError(); }))) {
        if (!sharding)
          op->emitOpError("has a non-sharding entry in '")
              << kOpShardingsAttrName << "'";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Gathers a value that a widening cast made (a bf16 gradient cast up for
/// its f32 master's update) before the cast instead: a gather only moves
/// elements, so it commutes with an elementwise cast, and the narrow type
/// moves half the bytes.
static void gatherBeforeWideningCasts(func::FuncOp func) {
  SmallVector<dist::AllGatherOp> gathers;
  func.walk([&](dist::AllGatherOp gather) { gathers.push_back(gather); });
  for (dist::AllGatherOp gather : gathers) {
    auto widen = gather.getInput().getDefiningOp<CastOp>();
    // The cast moves to where the gather runs: only within one pass.
    if (!widen || !widen->hasOneUse() || getPhase(widen) != getPhase(gather) ||
        widen->getAttr(kRecomputedAttrName) !=
            gather->getAttr(kRecomputedAttrName))
      continue;
    auto narrow = cast<RankedTensorType>(widen.getInput().getType());
    auto wide = cast<RankedTensorType>(widen.getType());
    if (!narrow.getElementType().isF16() && !narrow.getElementType().isBF16())
      continue;
    if (!wide.getElementType().isF32())
      continue;
    OpBuilder builder(gather);
    Operation *narrowGather = builder.clone(*gather);
    narrowGather->setOperand(0, widen.getInput());
    narrowGather->getResult(0).setType(cast<RankedTensorType>(gather.getType())
                                           .clone(narrow.getElementType()));
    auto widened = CastOp::create(builder, widen.getLoc(), gather.getType(),
                                  narrowGather->getResult(0));
    widened->setDiscardableAttrs(widen->getDiscardableAttrDictionary());
    gather.replaceAllUsesWith(widened.getResult());
    gather.erase();
    widen.erase();
  }
}

namespace {
struct PartitionPass : public parc::impl::PartitionPassBase<PartitionPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto meshName = func->getAttrOfType<FlatSymbolRefAttr>(kFuncMeshAttrName);
    if (!meshName || func->hasAttr("dist.partitioned"))
      return;
    dist::MeshOp mesh = dist::lookupMesh(func, meshName);
    if (!mesh) {
      func.emitError("refers to unknown mesh ") << meshName;
      return signalPassFailure();
    }
    if (failed(verifyRecordedShardings(func, mesh)) ||
        failed(Partitioner(func, mesh).run()))
      return signalPassFailure();
    gatherBeforeWideningCasts(func);
  }
};
} // namespace
