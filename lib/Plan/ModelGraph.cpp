//===- ModelGraph.cpp - the planner's view of a model function ------------===//

#include "parc/Plan/ModelGraph.h"

#include "parc/IR/DimensionFlow.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Transforms/Autodiff.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/MixedPrecision.h"
#include "parc/Transforms/Recompute.h"

#include "mlir/IR/IRMapping.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::parc;

/// A layer's structure: what its ops are and compute, not what they are
/// called.
static std::string getStructure(ArrayRef<Operation *> ops) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (Operation *op : ops) {
    os << op->getName() << "(";
    llvm::interleaveComma(op->getOperandTypes(), os);
    os << ")->(";
    llvm::interleaveComma(op->getResultTypes(), os);
    os << ")";
    for (NamedAttribute attribute : op->getAttrs())
      if (attribute.getName() != ParcDialect::kNameAttrName)
        os << attribute.getName() << "=" << attribute.getValue();
    os << ";";
  }
  return text;
}

Segment ModelGraph::getOwnerSegment(int64_t owner) const {
  if (owner == 0)
    return {Segment::Pre};
  if (owner > getNumLayers())
    return {Segment::Post};
  return {Segment::Layer, layerClasses[owner - 1]};
}

FailureOr<ModelGraph> ModelGraph::build(func::FuncOp func,
                                        bool mixedPrecision) {
  ModelGraph graph;
  graph.func = func;
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  auto loss = func.getNumResults() == 0
                  ? ShapedType()
                  : dyn_cast<ShapedType>(func.getResultTypes()[0]);
  if (!loss || loss.getRank() != 0)
    return emitError(func.getLoc(), "the planner needs a model whose first "
                                    "result is the scalar loss (@")
           << func.getSymName() << " returns no scalar first)";
  for (const ModelArgument &argument : *arguments) {
    if (argument.role == ArgumentRole::OptState)
      return emitError(func.getArgument(argument.index).getLoc(),
                       "the planner takes the forward model, not a train "
                       "step: argument '")
             << argument.name
             << "' is optimizer state (parc-plan plans the training itself)";
    if (argument.role == ArgumentRole::Param)
      graph.parameterCount += argument.type.getNumElements();
  }
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (!isa<ShardingRuleOpInterface>(op))
      return emitError(op.getLoc())
             << "'" << op.getName()
             << "' has no sharding rule, so the planner cannot place it";
    if (auto flops = dyn_cast<FlopCountOpInterface>(op))
      graph.forwardFlops += flops.getFlopCount();
  }

  // The training graph: a copy with the gradients appended.
  graph.training = ModuleOp::create(func.getLoc());
  OpBuilder builder(func.getContext());
  builder.setInsertionPointToStart(graph.training->getBody());
  auto training = cast<func::FuncOp>(builder.clone(*func));
  Block &body = training.getBody().front();
  // The copies of the function's ops, before mixed precision adds its casts.
  SmallVector<Operation *> copiedOps;
  for (Operation &op : body.without_terminator())
    copiedOps.push_back(&op);
  // In bf16, the types are the train step's: the planner prices what
  // parc-compile builds (bf16 parameters, activations and gradients, the
  // loss and its logits in f32).
  if (mixedPrecision &&
      failed(applyMixedPrecision(training, BFloat16Type::get(func.getContext()),
                                 /*lowPrecisionParameters=*/true)))
    return failure();
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);
  llvm::DenseSet<Operation *> forward(forwardOps.begin(), forwardOps.end());
  if (failed(appendGradients(training)))
    return emitError(func.getLoc(), "the planner prices training, and the "
                                    "model has no backward pass (see the "
                                    "error above)");
  for (Operation &op : body)
    if (!isa<func::ReturnOp>(op) && !isa<ShardingRuleOpInterface>(op))
      return emitError(op.getLoc())
             << "'" << op.getName()
             << "' of the backward pass has no sharding rule";

  // What the backward pass keeps under each recomputation: the compiler's
  // own recomputation applied to a copy, every layer recomputed.
  std::set<int64_t> layerIndices = getLayerIndices(training);
  llvm::DenseSet<Value> keptSelective, keptFull;
  llvm::DenseSet<Operation *> recomputedSelective, recomputedFull;
  for (RecomputeGranularity granularity :
       {RecomputeGranularity::Selective, RecomputeGranularity::Full}) {
    bool selective = granularity == RecomputeGranularity::Selective;
    llvm::DenseSet<Value> &kept = selective ? keptSelective : keptFull;
    if (layerIndices.empty())
      continue;
    IRMapping mapping;
    OwningOpRef<func::FuncOp> copy(
        cast<func::FuncOp>(training->clone(mapping)));
    SmallVector<Operation *> recomputedCopies;
    if (failed(recomputeLayers(
            *copy, layerIndices, granularity,
            [&] { return emitError(func.getLoc()); }, &recomputedCopies)))
      return failure();
    llvm::DenseSet<Operation *> copied(recomputedCopies.begin(),
                                       recomputedCopies.end());
    for (Operation *op : forwardOps)
      if (copied.contains(mapping.lookup(op)))
        (selective ? recomputedSelective : recomputedFull).insert(op);
    for (Operation *op : forwardOps)
      for (auto [result, copied] :
           llvm::zip(op->getResults(), mapping.lookup(op)->getResults()))
        if (llvm::any_of(copied.getUsers(), [&](Operation *user) {
              return getPhase(user) != Phase::Forward &&
                     !isa<func::ReturnOp>(user);
            }))
          kept.insert(result);
  }

  // Token and batch dimensions start at the inputs.
  SmallVector<std::pair<Value, SmallVector<bool>>> tokenSeeds, batchSeeds;
  for (const ModelArgument &argument : *arguments) {
    if (argument.role != ArgumentRole::Input &&
        argument.role != ArgumentRole::Label)
      continue;
    Value value = training.getArgument(argument.index);
    int64_t rank = argument.type.getRank();
    tokenSeeds.push_back({value, SmallVector<bool>(rank, true)});
    SmallVector<bool> batchDim(rank, false);
    if (rank > 0) {
      batchDim[0] = true;
      graph.batch = argument.type.getDimSize(0);
      if (graph.batch < 1)
        return emitError(training.getArgument(argument.index).getLoc())
               << "input '" << argument.name
               << "' has an empty batch dimension";
    }
    batchSeeds.push_back({value, batchDim});
  }
  DimensionFlow tokens = followDimensions(body, tokenSeeds);
  // Sharding rules give a dimension of size 1 no factor, so a model written
  // at batch 1 cannot follow its batch dimension; the token dimensions
  // (which the sequence keeps alive) stand in for it. They count a tensor
  // such as the position embedding's gradient, summed over the batch, as
  // growing with it: a small overestimate of its bytes.
  DimensionFlow batches = graph.batch > 1
                              ? followDimensions(body, batchSeeds)
                              : followDimensions(body, tokenSeeds);

  // Segments from parameter names.
  LayerNumbering numbering(training);
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<std::string> resultNames = getResultNames(training);
  // A backward op whose results only make gradients of parameters outside
  // the layers (the token embedding's, and its sum with a tied LM head's)
  // is the part before or after the layers, not the layer whose gradient
  // it reads.
  llvm::DenseSet<Operation *> outsideGradientOps;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    auto makesOutsideGradient = [&](OpOperand &use) {
      if (use.getOwner() != returnOp)
        return outsideGradientOps.contains(use.getOwner());
      StringRef name = resultNames[use.getOperandNumber()];
      return name.consume_back(".grad") && !numbering.lookup(name);
    };
    if (!forward.contains(&op) && op.getNumResults() > 0 &&
        llvm::all_of(op.getResults(), [&](Value result) {
          return !result.use_empty() &&
                 llvm::all_of(result.getUses(), makesOutsideGradient);
        }))
      outsideGradientOps.insert(&op);
  }
  llvm::DenseMap<Value, int64_t> valueLayer;
  bool seenLayer = false;
  SmallVector<Operation *> preOps, postOps;
  std::map<int64_t, SmallVector<Operation *>> layerOps;
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    std::optional<int64_t> layer;
    bool usesOtherParams = false;
    for (Value operand : op.getOperands()) {
      auto argument = dyn_cast<BlockArgument>(operand);
      if (!argument)
        continue;
      auto role = training.getArgAttrOfType<StringAttr>(
          argument.getArgNumber(), ParcDialect::kRoleAttrName);
      if (!role || role.getValue() != "param")
        continue;
      auto name = training.getArgAttrOfType<StringAttr>(
          argument.getArgNumber(), ParcDialect::kNameAttrName);
      if (std::optional<int64_t> index = numbering.lookup(name.getValue()))
        layer = std::max(layer.value_or(*index), *index);
      else
        usesOtherParams = true;
    }
    // Without parameters of its own, a forward op belongs to the latest
    // layer it reads from. A backward op belongs to the layer whose saved
    // tensors it reads, else to the earliest layer among the gradients it
    // combines: the residual stream's gradient flows from layer i + 1 into
    // layer i and must not drag every layer's backward ops into the last.
    if (!layer && !usesOtherParams && !outsideGradientOps.contains(&op)) {
      bool backward = !forward.contains(&op);
      std::optional<int64_t> latestSaved, earliestGradient;
      for (Value operand : op.getOperands()) {
        auto it = valueLayer.find(operand);
        if (it == valueLayer.end() || it->second < 0)
          continue;
        Operation *producer = operand.getDefiningOp();
        if (!backward || forward.contains(producer))
          latestSaved = std::max(latestSaved.value_or(it->second), it->second);
        else
          earliestGradient =
              std::min(earliestGradient.value_or(it->second), it->second);
      }
      layer = latestSaved ? latestSaved : earliestGradient;
    }
    for (Value result : op.getResults())
      valueLayer[result] = layer ? *layer : -1;
    if (layer) {
      seenLayer = true;
      layerOps[*layer].push_back(&op);
    } else {
      (seenLayer ? postOps : preOps).push_back(&op);
    }
  }

  // One class per layer structure.
  std::map<std::string, int64_t> classes;
  SmallVector<SmallVector<Operation *>> representatives;
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> position;
  for (auto &[index, opsOfLayer] : layerOps) {
    std::string structure = getStructure(opsOfLayer);
    auto [it, added] = classes.try_emplace(structure, classes.size());
    if (added)
      representatives.push_back(opsOfLayer);
    graph.layerClasses.push_back(it->second);
    for (auto [i, op] : llvm::enumerate(opsOfLayer))
      position[op] = {it->second, static_cast<int64_t>(i)};
  }

  // Nodes: ops before the layers, one layer of each class, ops after.
  llvm::DenseMap<Operation *, int64_t> nodeOfOp;
  auto addOpNode = [&](Operation *op, Segment segment, int64_t instances) {
    GraphNode node{GraphNode::Op};
    node.op = op;
    node.rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
    node.segment = segment;
    node.instances = instances;
    node.backward = !forward.contains(op);
    node.tokenFactors = tokens.factors.lookup(op);
    node.batchFactors = batches.factors.lookup(op);
    for (Value result : op->getResults()) {
      node.savedForBackward.push_back(
          !node.backward && llvm::any_of(result.getUsers(), [&](Operation *u) {
            return !forward.contains(u) && !isa<func::ReturnOp>(u);
          }));
      node.keptSelective.push_back(keptSelective.contains(result));
      node.keptFull.push_back(keptFull.contains(result));
      node.batchScaled.push_back(batches.spans(result));
    }
    node.recomputedSelective = recomputedSelective.contains(op);
    node.recomputedFull = recomputedFull.contains(op);
    for (Value operand : op->getOperands())
      node.operandBatchScaled.push_back(batches.spans(operand));
    graph.nodes.push_back(std::move(node));
    return static_cast<int64_t>(graph.nodes.size() - 1);
  };
  for (Operation *op : preOps)
    nodeOfOp[op] = addOpNode(op, {Segment::Pre}, 1);
  for (auto [layerClass, opsOfClass] : llvm::enumerate(representatives)) {
    int64_t count = llvm::count(graph.layerClasses, int64_t(layerClass));
    Segment segment{Segment::Layer, static_cast<int64_t>(layerClass)};
    for (Operation *op : opsOfClass)
      nodeOfOp[op] = addOpNode(op, segment, count);
    // The layer's output is its last forward op's result.
    for (Operation *op : llvm::reverse(opsOfClass))
      if (forward.contains(op)) {
        graph.layerOutputs[layerClass] = nodeOfOp[op];
        break;
      }
  }
  for (Operation *op : postOps)
    nodeOfOp[op] = addOpNode(op, {Segment::Post}, 1);
  auto nodeOf = [&](Operation *op) {
    auto it = position.find(op);
    if (it == position.end())
      return nodeOfOp.lookup(op);
    return nodeOfOp.lookup(
        representatives[it->second.first][it->second.second]);
  };

  // Arguments become nodes where they are first used; a layer's parameter
  // shares the node of the same parameter in the other layers of its class,
  // and a parameter used twice (a tied embedding) has one node.
  llvm::DenseMap<Value, int64_t> argumentNodes;
  std::map<std::pair<int64_t, unsigned>, int64_t> layerArgumentNodes;
  std::map<std::tuple<int64_t, unsigned, int64_t, unsigned, bool>, int64_t>
      edgeIndex;
  auto argumentNode = [&](BlockArgument argument, Operation *user,
                          int64_t consumer, unsigned operandIndex) {
    if (auto it = argumentNodes.find(argument); it != argumentNodes.end())
      return it->second;
    bool inLayer = position.count(user);
    auto key = std::make_pair(consumer, operandIndex);
    if (inLayer)
      if (auto it = layerArgumentNodes.find(key);
          it != layerArgumentNodes.end())
        return argumentNodes[argument] = it->second;
    auto role = training.getArgAttrOfType<StringAttr>(
        argument.getArgNumber(), ParcDialect::kRoleAttrName);
    GraphNode node{role && role.getValue() == "param" ? GraphNode::Param
                                                      : GraphNode::Input};
    node.argument = argument;
    node.segment = graph.nodes[consumer].segment;
    node.instances = inLayer ? graph.nodes[consumer].instances : 1;
    node.batchScaled.push_back(batches.spans(argument));
    graph.nodes.push_back(std::move(node));
    int64_t index = graph.nodes.size() - 1;
    if (inLayer)
      layerArgumentNodes[key] = index;
    return argumentNodes[argument] = index;
  };
  auto addEdge = [&](int64_t producer, unsigned result, int64_t consumer,
                     unsigned operand, bool toParameterLayout) {
    auto key =
        std::make_tuple(producer, result, consumer, operand, toParameterLayout);
    auto [it, added] = edgeIndex.try_emplace(key, graph.edges.size());
    if (added)
      graph.edges.push_back(
          {producer, result, consumer, operand, 0, toParameterLayout});
    ++graph.edges[it->second].uses;
  };
  auto producerOf = [&](Value value, Operation *user, int64_t consumer,
                        unsigned operandIndex) {
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      int64_t node = argumentNode(argument, user, consumer, operandIndex);
      graph.argumentNodes[argument.getArgNumber()] = node;
      return std::make_pair(node, 0u);
    }
    return std::make_pair(nodeOf(value.getDefiningOp()),
                          cast<OpResult>(value).getResultNumber());
  };
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    int64_t consumer = nodeOf(&op);
    for (auto [operandIndex, operand] : llvm::enumerate(op.getOperands())) {
      auto [producer, result] =
          producerOf(operand, &op, consumer, operandIndex);
      addEdge(producer, result, consumer, operandIndex, false);
    }
  }
  // An op depends on no input if no operand's producer does (the
  // gradients' edges into the parameters come below).
  for (GraphNode &node : graph.nodes)
    node.invariant = node.kind != GraphNode::Input;
  for (bool changed = true; changed;) {
    changed = false;
    for (const GraphEdge &edge : graph.edges) {
      GraphNode &consumer = graph.nodes[edge.consumer];
      if (consumer.invariant && !graph.nodes[edge.producer].invariant) {
        consumer.invariant = false;
        changed = true;
      }
    }
  }

  // Each gradient result `<param>.grad` goes to its parameter's layout.
  llvm::StringMap<unsigned> parameterIndex;
  for (const ModelArgument &argument : *arguments)
    if (argument.role == ArgumentRole::Param)
      parameterIndex[argument.name] = argument.index;
  for (auto [index, value] : llvm::enumerate(returnOp.getOperands())) {
    StringRef name = resultNames[index];
    if (!name.consume_back(".grad") || !parameterIndex.count(name) ||
        isa<BlockArgument>(value))
      continue;
    auto node = graph.argumentNodes.find(parameterIndex[name]);
    if (node == graph.argumentNodes.end())
      continue;
    addEdge(nodeOf(value.getDefiningOp()),
            cast<OpResult>(value).getResultNumber(), node->second, 0, true);
  }

  // The tensors and ops in program order, each with its owner.
  int64_t layers = graph.layerClasses.size();
  llvm::DenseMap<Operation *, int64_t> ownerOf;
  for (auto [ordinal, entry] : llvm::enumerate(layerOps))
    for (Operation *op : entry.second)
      ownerOf[op] = ordinal + 1;
  int64_t lastLayerBackward = -1;
  llvm::DenseMap<Operation *, int64_t> positionOf;
  for (auto [index, op] : llvm::enumerate(body)) {
    positionOf[&op] = index;
    if (ownerOf.count(&op) && !forward.contains(&op))
      lastLayerBackward = index;
  }
  for (Operation *op : postOps)
    // The backward ops after the layers' are the part before them.
    ownerOf[op] = !forward.contains(op) && positionOf[op] > lastLayerBackward
                      ? 0
                      : layers + 1;
  llvm::DenseSet<Value> gradients;
  for (auto [value, name] : llvm::zip(returnOp.getOperands(), resultNames))
    if (StringRef(name).ends_with(".grad") && !isa<BlockArgument>(value))
      gradients.insert(value);
  // A backward tensor that only goes into gradients is a part of one.
  for (Operation &op : llvm::reverse(body.without_terminator()))
    for (Value result : op.getResults())
      if (!forward.contains(&op) && !result.use_empty() &&
          llvm::all_of(result.getUsers(), [&](Operation *user) {
            return user != returnOp &&
                   llvm::all_of(user->getResults(), [&](Value value) {
                     return gradients.contains(value);
                   });
          }))
        gradients.insert(result);
  // Input-gradient ops lead to a gradient a part hands to the one before
  // it (a pipeline stage sends it back); the other backward ops make only
  // weight gradients (a tied LM head's reaches the part before the layers
  // as a weight's gradient, not through the layers). The part before the
  // layers runs on the first stage, which defers none.
  llvm::DenseSet<Operation *> inputGradientOps, reachFirstPart;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (forward.contains(&op))
      continue;
    int64_t owner = ownerOf.lookup(&op);
    bool reaches = llvm::any_of(op.getUsers(), [&](Operation *user) {
      return reachFirstPart.contains(user) ||
             (user != returnOp && !forward.contains(user) &&
              ownerOf.lookup(user) == 0);
    });
    if (reaches && owner == layers + 1)
      reachFirstPart.insert(&op);
    bool leads = llvm::any_of(op.getUsers(), [&](Operation *user) {
      if (inputGradientOps.contains(user))
        return true;
      if (user == returnOp || forward.contains(user))
        return false;
      int64_t earlier = ownerOf.lookup(user);
      return earlier < owner && (earlier >= 1 || owner == 1);
    });
    if (leads) {
      inputGradientOps.insert(&op);
    } else if (owner != 0) {
      GraphNode &node = graph.nodes[nodeOf(&op)];
      node.weightGradient = true;
      node.tiedGradient = reachFirstPart.contains(&op);
    }
  }
  int64_t returnPosition = positionOf[returnOp];
  llvm::DenseMap<Value, int64_t> liveTensorOf;
  for (Operation &op : body.without_terminator()) {
    int64_t position = positionOf[&op];
    LiveOp live{nodeOf(&op), ownerOf.lookup(&op), !forward.contains(&op), {}};
    for (Value operand : op.getOperands())
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        auto node = graph.argumentNodes.find(argument.getArgNumber());
        if (node != graph.argumentNodes.end() &&
            graph.nodes[node->second].kind == GraphNode::Param)
          live.parameterNodes.push_back(node->second);
      }
    graph.liveOps.push_back(std::move(live));
    for (OpResult result : op.getResults()) {
      int64_t end = position;
      for (Operation *user : result.getUsers())
        end = std::max(end, user == returnOp ? returnPosition
                                             : positionOf.lookup(user));
      LiveTensor::Kind kind = LiveTensor::Temporary;
      if (forward.contains(&op) &&
          llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !forward.contains(user) && user != returnOp;
          }))
        kind = LiveTensor::Saved;
      else if (gradients.contains(result))
        kind = LiveTensor::Gradient;
      // A result written over an operand that dies here (as the memory plan
      // places it): the operand's buffer is the result's from this op on.
      for (Value operand : op.getOperands()) {
        auto it = liveTensorOf.find(operand);
        if (it == liveTensorOf.end() ||
            graph.liveTensors[it->second].end != position ||
            !mayWriteOver(&op, operand, result))
          continue;
        graph.liveTensors[it->second].end = position - 1;
        break;
      }
      liveTensorOf[result] = graph.liveTensors.size();
      graph.liveTensors.push_back({nodeOf(&op), result.getResultNumber(),
                                   position, end, ownerOf.lookup(&op), kind});
    }
  }

  // Forward ops of the function as given share their copies' nodes, and
  // their copies' positions: where the train step has them.
  llvm::DenseMap<Operation *, int64_t> planPositionOf;
  for (auto [index, op] : llvm::enumerate(getPlanPositionedOps(training)))
    planPositionOf[op] = index;
  for (auto [live, op] :
       llvm::zip_equal(graph.liveOps, body.without_terminator()))
    live.planPosition = planPositionOf.lookup_or(&op, -1);
  for (auto [original, copy] : llvm::zip_equal(
           func.getBody().front().without_terminator(), copiedOps)) {
    graph.opNodes[&original] = nodeOf(copy);
    graph.planPositions[&original] = planPositionOf.lookup_or(copy, -1);
  }
  return graph;
}
