//===- ShardingPropagation.cpp - factor-based sharding propagation --------===//
//
// A worklist driver over ops: each visit projects the shardings known for
// an op's operands and results onto its factors, resolves each factor by
// priority and communication, and derives shardings for the op's tensors.
// A propagated sharding only ever gains axes, so the walk reaches a fixed
// point.
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ParcInterfaces.h"
#include "parc/Transforms/FactorSharding.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/ShardingAnnotations.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::parc {
#define GEN_PASS_DEF_SHARDINGPROPAGATIONPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

/// Where a sharding came from; higher wins.
enum class Priority { Propagated = 1, Plan = 2, Explicit = 3 };

struct ValueState {
  TensorSharding sharding;
  Priority priority;
};

/// One tensor's opinion about one factor.
struct Candidate {
  AxisList axes;
  Priority priority;
  int64_t bytes;
  unsigned tensor;
};

int64_t tensorBytes(Value value) {
  auto type = cast<ShapedType>(value.getType());
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

std::string axesString(ArrayRef<StringAttr> axes) {
  std::string text = "[";
  for (auto [index, axis] : llvm::enumerate(axes))
    text += (index ? ", " : "") + axis.getValue().str();
  return text + "]";
}

/// Picks a factor's axes from its candidates: the highest priority wins;
/// among equals, the axes that the fewest bytes disagree with, then the
/// sharded choice, then the lexicographically smaller list.
const Candidate *chooseCandidate(ArrayRef<Candidate> candidates) {
  Priority top = Priority::Propagated;
  for (const Candidate &candidate : candidates)
    top = std::max(top, candidate.priority);
  const Candidate *best = nullptr;
  int64_t bestCost = 0;
  for (const Candidate &candidate : candidates) {
    if (candidate.priority != top)
      continue;
    int64_t cost = 0;
    for (const Candidate &other : candidates)
      if (other.priority == top && other.axes != candidate.axes)
        cost += other.bytes;
    auto key = [](const Candidate *c, int64_t cost) {
      return std::make_tuple(cost, c->axes.empty(),
                             axesString(c->axes));
    };
    if (!best || key(&candidate, cost) < key(best, bestCost)) {
      best = &candidate;
      bestCost = cost;
    }
  }
  return best;
}

class Propagator {
public:
  Propagator(func::FuncOp func, dist::MeshOp mesh) : func(func), mesh(mesh) {}

  /// Records `sharding` as the state of `value` with `priority`.
  void seed(Value value, TensorSharding sharding, Priority priority) {
    auto it = states.find(value);
    if (it == states.end() || it->second.priority < priority)
      states[value] = {std::move(sharding), priority};
  }

  LogicalResult run();
  void record();

private:
  /// The factor axes an op's known shardings imply.
  FailureOr<FactorAxes> resolveFactors(Operation *op, const ShardingRule &rule);
  LogicalResult visit(Operation *op, ShardingRuleOpInterface ruleOp);
  bool update(Value value, const TensorSharding &derived);
  void enqueueNeighbours(Value value);

  func::FuncOp func;
  dist::MeshOp mesh;
  llvm::DenseMap<Value, ValueState> states;
  llvm::SetVector<Operation *> worklist;
};

} // namespace

/// Merges `derived` into a propagated state: a dimension gains axes only if
/// it had none or they extend what it has, and no axis is used twice.
bool Propagator::update(Value value, const TensorSharding &derived) {
  auto it = states.find(value);
  if (it == states.end()) {
    if (derived.isReplicated())
      return false;
    states[value] = {derived, Priority::Propagated};
    return true;
  }
  ValueState &state = it->second;
  if (state.priority != Priority::Propagated)
    return false;
  TensorSharding merged = state.sharding;
  merged.partial.clear();
  for (auto [dim, axes] : llvm::enumerate(derived.dims)) {
    AxisList &current = merged.dims[dim];
    if (axes.size() <= current.size() ||
        !llvm::equal(ArrayRef<StringAttr>(axes).take_front(current.size()),
                     current))
      continue;
    ArrayRef<StringAttr> extra = ArrayRef<StringAttr>(axes).drop_front(
        current.size());
    if (llvm::any_of(extra,
                     [&](StringAttr axis) { return merged.usesAxis(axis); }))
      continue;
    llvm::append_range(current, extra);
  }
  if (merged == state.sharding)
    return false;
  state.sharding = std::move(merged);
  return true;
}

void Propagator::enqueueNeighbours(Value value) {
  if (Operation *producer = value.getDefiningOp())
    worklist.insert(producer);
  for (Operation *user : value.getUsers())
    worklist.insert(user);
}

FailureOr<FactorAxes> Propagator::resolveFactors(Operation *op,
                                                 const ShardingRule &rule) {
  SmallVector<Value> values(op->getOperands());
  llvm::append_range(values, op->getResults());
  SmallVector<const TensorFactors *> tensors = rule.getTensors();

  SmallVector<const ValueState *> known;
  SmallVector<const TensorSharding *> shardings;
  for (Value value : values) {
    auto it = states.find(value);
    known.push_back(it == states.end() ? nullptr : &it->second);
    shardings.push_back(known.back() ? &known.back()->sharding : nullptr);
  }
  SmallVector<SmallVector<Candidate>> candidates(rule.getFactors().size());
  for (const FactorClaim &claim : collectFactorClaims(rule, shardings, mesh)) {
    const ValueState &state = *known[claim.tensor];
    // A propagated tensor that leaves a factor whole has no opinion; a
    // user's or plan's sharding does (it asks for the factor whole).
    if (state.priority != Priority::Propagated || !claim.axes.empty())
      candidates[claim.factor].push_back({claim.axes, state.priority,
                                          tensorBytes(values[claim.tensor]),
                                          claim.tensor});
  }

  // Conflicting user annotations are an error, not a choice.
  for (auto [index, list] : llvm::enumerate(candidates)) {
    // Lambdas capture variables, not structured bindings (before C++20).
    int64_t factor = index;
    for (const Candidate &a : list)
      for (const Candidate &b : list)
        if (a.priority == Priority::Explicit &&
            b.priority == Priority::Explicit && !a.axes.empty() &&
            !b.axes.empty() && a.axes != b.axes && a.tensor < b.tensor) {
          auto describe = [&](const Candidate &c) {
            unsigned numOperands = op->getNumOperands();
            std::string what = c.tensor < numOperands
                                   ? "operand #" + std::to_string(c.tensor)
                                   : "result #" + std::to_string(
                                                      c.tensor - numOperands);
            for (auto [dim, dimFactors] : llvm::enumerate(*tensors[c.tensor]))
              if (llvm::is_contained(dimFactors, factor))
                return what + " dimension " + std::to_string(dim) +
                       " is split over " + axesString(c.axes);
            return what;
          };
          return op->emitOpError("has conflicting explicit shardings: ")
                 << describe(a) << " but " << describe(b);
        }
  }

  // Resolve factors from the highest priority down so that the stronger
  // claim keeps an axis that two factors want; among equals, the factor
  // whose tensors in that layout hold more bytes (the others move less).
  struct Contender {
    Priority priority;
    int64_t bytes;
    int64_t factor;
  };
  SmallVector<Contender> order;
  SmallVector<const Candidate *> chosen(candidates.size(), nullptr);
  for (auto [factor, list] : llvm::enumerate(candidates)) {
    chosen[factor] = chooseCandidate(list);
    if (!chosen[factor])
      continue;
    int64_t bytes = 0;
    for (const Candidate &candidate : list)
      if (candidate.priority == chosen[factor]->priority &&
          candidate.axes == chosen[factor]->axes)
        bytes += candidate.bytes;
    order.push_back({chosen[factor]->priority, bytes, int64_t(factor)});
  }
  llvm::stable_sort(order, [](const Contender &a, const Contender &b) {
    return std::make_pair(a.priority, a.bytes) >
           std::make_pair(b.priority, b.bytes);
  });
  FactorAxes factorAxes(candidates.size());
  llvm::SmallDenseSet<StringAttr> used;
  for (const Contender &contender : order)
    for (StringAttr axis : chosen[contender.factor]->axes) {
      if (!used.insert(axis).second)
        break;
      factorAxes[contender.factor].push_back(axis);
    }
  legalizeFactorAxes(rule, factorAxes, mesh);
  return factorAxes;
}

LogicalResult Propagator::visit(Operation *op, ShardingRuleOpInterface ruleOp) {
  ShardingRule rule = ruleOp.getShardingRule();
  FailureOr<FactorAxes> factors = resolveFactors(op, rule);
  if (failed(factors))
    return failure();
  SmallVector<Value> values(op->getOperands());
  llvm::append_range(values, op->getResults());
  SmallVector<const TensorFactors *> tensors = rule.getTensors();
  for (auto [index, value] : llvm::enumerate(values)) {
    TensorSharding derived = deriveTensorSharding(rule, *tensors[index],
                                                  *factors,
                                                  /*isResult=*/false);
    if (update(value, derived))
      enqueueNeighbours(value);
  }
  return success();
}

LogicalResult Propagator::run() {
  for (Operation &op : func.getBody().front())
    worklist.insert(&op);
  // Each visit that changes something adds an axis to some value: bound the
  // walk by that, with slack, to report a bug instead of hanging.
  int64_t budget = 64 * static_cast<int64_t>(worklist.size() + 1) *
                   (mesh.getAxisNames().size() + 1);
  while (!worklist.empty()) {
    if (--budget < 0)
      return func.emitError("sharding propagation did not converge");
    Operation *op = worklist.front();
    worklist.remove(op);
    if (auto constraint = dyn_cast<dist::ConstraintOp>(op)) {
      // The producer is pulled towards the pinned layout.
      if (update(constraint.getInput(),
                 TensorSharding::fromAttr(constraint.getSharding())))
        enqueueNeighbours(constraint.getInput());
      continue;
    }
    if (auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op))
      if (failed(visit(op, ruleOp)))
        return failure();
  }
  return success();
}

void Propagator::record() {
  MLIRContext *context = func.getContext();
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  auto shardingOf = [&](Value value) {
    auto it = states.find(value);
    TensorSharding sharding =
        it != states.end()
            ? it->second.sharding
            : TensorSharding::replicated(
                  cast<ShapedType>(value.getType()).getRank());
    return sharding.toAttr(context, meshRef);
  };
  for (BlockArgument argument : func.getArguments()) {
    func.setArgAttr(argument.getArgNumber(),
                    dist::DistDialect::kShardingAttrName,
                    shardingOf(argument));
    func.removeArgAttr(argument.getArgNumber(),
                       dist::DistDialect::kPlanShardingAttrName);
  }
  // A value's state may hold what its users asked for; its producer
  // decides. Record what each op makes of its inputs at the fixed point.
  func.walk([&](Operation *op) {
    if (op->getNumResults() == 0 || isa<dist::ConstraintOp>(op))
      return;
    SmallVector<Attribute> shardings;
    auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
    FailureOr<FactorAxes> factors = failure();
    ShardingRule rule;
    if (ruleOp) {
      rule = ruleOp.getShardingRule();
      factors = resolveFactors(op, rule);
    }
    for (Value result : op->getResults()) {
      if (failed(factors)) {
        shardings.push_back(shardingOf(result));
        continue;
      }
      unsigned index = cast<OpResult>(result).getResultNumber();
      shardings.push_back(deriveTensorSharding(rule, rule.getResults()[index],
                                               *factors, /*isResult=*/false)
                              .toAttr(context, meshRef));
    }
    op->setAttr(kOpShardingsAttrName, ArrayAttr::get(context, shardings));
  });
  func->setAttr(kFuncMeshAttrName, meshRef);
}

/// Collects the annotations of `func` and checks that they name one mesh.
/// Returns a null mesh when nothing is annotated.
static FailureOr<dist::MeshOp>
findMesh(func::FuncOp func,
         SmallVectorImpl<std::tuple<Value, dist::ShardingAttr, Priority,
                                    std::string>> &seeds) {
  auto addArg = [&](unsigned index, StringRef attrName, Priority priority) {
    if (auto attr = func.getArgAttrOfType<dist::ShardingAttr>(index, attrName))
      seeds.push_back({func.getArgument(index), attr, priority,
                       "argument #" + std::to_string(index)});
  };
  for (unsigned index = 0; index < func.getNumArguments(); ++index) {
    addArg(index, dist::DistDialect::kShardingAttrName, Priority::Explicit);
    addArg(index, dist::DistDialect::kPlanShardingAttrName, Priority::Plan);
  }
  Operation *terminator = func.getBody().front().getTerminator();
  for (unsigned index = 0; index < func.getNumResults(); ++index)
    if (auto attr = func.getResultAttrOfType<dist::ShardingAttr>(
            index, dist::DistDialect::kShardingAttrName))
      seeds.push_back({terminator->getOperand(index), attr, Priority::Explicit,
                       "result #" + std::to_string(index)});
  func.walk([&](dist::ConstraintOp constraint) {
    bool fromPlan =
        constraint->hasAttr(dist::DistDialect::kFromPlanAttrName);
    seeds.push_back({constraint.getResult(), constraint.getSharding(),
                     fromPlan ? Priority::Plan : Priority::Explicit,
                     "dist.constraint"});
    // A plan's pin says how the producer computes the value (the planner
    // chose the op's strategy), so it weighs against the op's other
    // pinned tensors; a user's constraint in the IR, and a plan's pin of
    // one use, may ask for a reshard.
    if (fromPlan && !constraint->hasAttr(dist::DistDialect::kPlanUseAttrName))
      seeds.push_back({constraint.getInput(), constraint.getSharding(),
                       Priority::Plan, "dist.constraint"});
  });

  dist::MeshOp mesh;
  for (auto &[seedValue, attr, priority, what] : seeds) {
    // Lambdas capture variables, not structured bindings (before C++20).
    Value value = seedValue;
    dist::MeshOp found = dist::lookupMesh(func, attr.getMesh());
    if (!found)
      return func.emitError() << what << " of @" << func.getSymName()
                              << " refers to unknown mesh " << attr.getMesh();
    if (mesh && found != mesh)
      return func.emitError() << what << " of @" << func.getSymName()
                              << " uses mesh " << attr.getMesh()
                              << " but other annotations use @"
                              << mesh.getSymName();
    mesh = found;
    if (failed(dist::verifyShardingForType(
            attr, cast<ShapedType>(value.getType()), mesh,
            what + " of @" + func.getSymName().str(),
            [&] { return emitError(value.getLoc()); })))
      return failure();
  }
  return mesh;
}

namespace {
struct ShardingPropagationPass
    : public parc::impl::ShardingPropagationPassBase<
          ShardingPropagationPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<std::tuple<Value, dist::ShardingAttr, Priority, std::string>>
        seeds;
    FailureOr<dist::MeshOp> mesh = findMesh(func, seeds);
    if (failed(mesh))
      return signalPassFailure();
    if (!*mesh)
      return;
    Propagator propagator(func, *mesh);
    for (auto &[value, attr, priority, what] : seeds) {
      TensorSharding sharding = TensorSharding::fromAttr(attr);
      // Results and constraints pin layouts; propagation sees dimensions.
      sharding.partial.clear();
      propagator.seed(value, sharding, priority);
    }
    if (failed(propagator.run()))
      return signalPassFailure();
    propagator.record();
  }
};
} // namespace
