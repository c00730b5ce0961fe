//===- Recompute.cpp - activation recomputation of layers -----------------===//

#include "parc/Transforms/Recompute.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::parc;

namespace {
/// No layer: inputs, and what embeddings, the final norm or the head make.
constexpr int64_t kNoLayer = -1;
} // namespace

static bool isForward(Operation *op) {
  return op->hasAttr(kPhaseAttrName) && getPhase(op) == Phase::Forward;
}

/// Parameter arguments of `func`, by their layer (kNoLayer outside every
/// layer).
static llvm::DenseMap<Value, int64_t> getParameterLayers(func::FuncOp func) {
  llvm::DenseMap<Value, int64_t> layers;
  LayerNumbering numbering(func);
  for (BlockArgument argument : func.getArguments()) {
    auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kRoleAttrName);
    auto name = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kNameAttrName);
    if (role && role.getValue() == "param")
      layers[argument] =
          name ? numbering.lookup(name.getValue()).value_or(kNoLayer)
               : kNoLayer;
  }
  return layers;
}

llvm::DenseMap<Operation *, int64_t>
mlir::parc::getForwardLayers(func::FuncOp func) {
  Block &body = func.getBody().front();
  llvm::DenseMap<Value, int64_t> parameterLayers = getParameterLayers(func);
  llvm::DenseMap<Operation *, int64_t> layers;
  for (Operation &op : body.without_terminator()) {
    if (!isForward(&op))
      continue;
    int64_t parameterLayer = kNoLayer, operandLayer = kNoLayer;
    bool readsParameter = false;
    for (Value operand : op.getOperands()) {
      if (auto it = parameterLayers.find(operand);
          it != parameterLayers.end()) {
        readsParameter = true;
        parameterLayer = std::max(parameterLayer, it->second);
      } else if (Operation *producer = operand.getDefiningOp()) {
        operandLayer =
            std::max(operandLayer, layers.lookup_or(producer, kNoLayer));
      }
    }
    layers[&op] = readsParameter ? parameterLayer : operandLayer;
  }
  return layers;
}

LogicalResult
mlir::parc::recomputeLayers(func::FuncOp func, const std::set<int64_t> &layers,
                            RecomputeGranularity granularity,
                            llvm::function_ref<InFlightDiagnostic()> emitError,
                            SmallVectorImpl<Operation *> *recomputed) {
  Block &body = func.getBody().front();
  if (llvm::none_of(body.without_terminator(), [](Operation &op) {
        return op.hasAttr(kPhaseAttrName) && getPhase(&op) == Phase::Backward;
      }))
    return emitError() << "activation recomputation needs a train step's "
                          "backward pass, and @"
                       << func.getSymName()
                       << " has none (make one with --parc-make-train-step)";
  std::set<int64_t> existing = getLayerIndices(func);
  if (layers.empty())
    return emitError() << "activation recomputation recomputes layers, but @"
                       << func.getSymName()
                       << " has none (parameters named like 'h.<i>.…')";
  for (int64_t layer : layers)
    if (!existing.count(layer))
      return emitError() << "cannot recompute layer " << layer
                         << ": the model's layers are "
                         << (existing.empty()
                                 ? std::string("none")
                                 : std::to_string(*existing.begin()) + " to " +
                                       std::to_string(*existing.rbegin()));

  llvm::DenseMap<Operation *, int64_t> layerOf = getForwardLayers(func);
  // A copy names its op by plan position: a plan's layout for "@N" is its
  // copies' too.
  llvm::DenseMap<Operation *, int64_t> planPositions;
  for (auto [position, op] : llvm::enumerate(getPlanPositionedOps(func)))
    planPositions[op] = position;
  llvm::DenseMap<Value, int64_t> parameterLayers = getParameterLayers(func);
  auto readsParameter = [&](Operation *op) {
    return llvm::any_of(op->getOperands(), [&](Value operand) {
      return parameterLayers.contains(operand);
    });
  };
  for (int64_t layer : layers) {
    auto inLayer = [&](Operation *op) {
      auto it = layerOf.find(op);
      return it != layerOf.end() && it->second == layer;
    };
    // A value crosses the boundary when a forward op of another layer or
    // the result list reads it; the backward pass keeps those, and at
    // selective granularity what parameterized ops make.
    auto isInner = [&](Value value) {
      Operation *producer = value.getDefiningOp();
      if (!producer || !inLayer(producer) ||
          (granularity == RecomputeGranularity::Selective &&
           readsParameter(producer)))
        return false;
      return llvm::all_of(value.getUsers(), [&](Operation *user) {
        return !isForward(user) ? !isa<func::ReturnOp>(user) : inLayer(user);
      });
    };
    // The inner values the backward pass reads, and the ops that make them
    // from the layer's boundary.
    SmallVector<OpOperand *> backwardUses;
    SetVector<Operation *> cloned;
    SmallVector<Value> worklist;
    for (Operation &op : body.without_terminator()) {
      if (isForward(&op))
        continue;
      for (OpOperand &operand : op.getOpOperands())
        if (isInner(operand.get())) {
          backwardUses.push_back(&operand);
          worklist.push_back(operand.get());
        }
    }
    if (backwardUses.empty())
      continue;
    while (!worklist.empty()) {
      Operation *producer = worklist.pop_back_val().getDefiningOp();
      if (!cloned.insert(producer))
        continue;
      for (Value operand : producer->getOperands())
        if (isInner(operand))
          worklist.push_back(operand);
    }
    // Clones in program order, before the first backward op that reads one.
    Operation *firstReader = backwardUses.front()->getOwner();
    OpBuilder builder(firstReader);
    IRMapping mapping;
    for (Operation &op : body.without_terminator()) {
      if (!cloned.contains(&op))
        continue;
      if (recomputed)
        recomputed->push_back(&op);
      Operation *clone = builder.clone(op, mapping);
      setPhase(clone, Phase::Backward);
      clone->setAttr(
          kRecomputedAttrName,
          builder.getI64IntegerAttr(planPositions.lookup_or(&op, -1)));
    }
    for (OpOperand *use : backwardUses)
      use->set(mapping.lookup(use->get()));
  }
  return success();
}
