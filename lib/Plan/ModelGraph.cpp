//===- ModelGraph.cpp - the planner's view of a model function ------------===//

#include "parc/Plan/ModelGraph.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Transforms/Autodiff.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::parc;

/// The layer index in a parameter name such as `h.11.attn.c_attn.weight`:
/// its first all-digit component.
static std::optional<int64_t> getLayerIndex(StringRef name) {
  SmallVector<StringRef> parts;
  name.split(parts, '.');
  for (StringRef part : parts) {
    int64_t index;
    if (!part.empty() && llvm::all_of(part, llvm::isDigit) &&
        !part.getAsInteger(10, index))
      return index;
  }
  return std::nullopt;
}

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

/// Which results of `func`'s ops the backward pass reads: autodiff runs on a
/// copy, and a forward result counts as saved when a backward op uses it.
static FailureOr<llvm::DenseSet<Value>> findSavedValues(func::FuncOp func) {
  OpBuilder builder(func.getContext());
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(func.getLoc());
  builder.setInsertionPointToStart(scratch->getBody());
  auto copy = cast<func::FuncOp>(builder.clone(*func));
  SmallVector<Operation *> original, copied;
  func.walk([&](Operation *op) {
    if (op != func && !isa<func::ReturnOp>(op))
      original.push_back(op);
  });
  copy.walk([&](Operation *op) {
    if (op != copy && !isa<func::ReturnOp>(op))
      copied.push_back(op);
  });
  llvm::DenseSet<Operation *> forward(copied.begin(), copied.end());
  // Autodiff reports its own errors; the planner then counts every tensor.
  ScopedDiagnosticHandler quiet(func.getContext(),
                                [](Diagnostic &) { return success(); });
  if (failed(appendGradients(copy)))
    return failure();
  llvm::DenseSet<Value> saved;
  for (auto [op, copiedOp] : llvm::zip_equal(original, copied))
    for (auto [result, copiedResult] :
         llvm::zip_equal(op->getResults(), copiedOp->getResults()))
      if (llvm::any_of(copiedResult.getUsers(), [&](Operation *user) {
            return !forward.contains(user) && !isa<func::ReturnOp>(user);
          }))
        saved.insert(result);
  return saved;
}

FailureOr<ModelGraph> ModelGraph::build(func::FuncOp func) {
  ModelGraph graph;
  graph.func = func;
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  if (func.getNumResults() == 0 ||
      cast<ShapedType>(func.getResultTypes()[0]).getRank() != 0)
    return emitError(func.getLoc(), "the planner needs a model whose first "
                                    "result is the scalar loss (@")
           << func.getSymName() << " returns no scalar first)";

  // Batch dependence and token dimensions start at the inputs.
  llvm::DenseSet<Value> batchScaled;
  llvm::DenseMap<Value, SmallVector<bool>> tokenDims;
  llvm::DenseMap<Operation *, SmallVector<bool>> tokenFactorsOf;
  for (const ModelArgument &argument : *arguments) {
    BlockArgument value = func.getArgument(argument.index);
    if (argument.role == ArgumentRole::OptState)
      return emitError(value.getLoc(), "the planner takes the forward "
                                       "model, not a train step: argument '")
             << argument.name
             << "' is optimizer state (parc-plan plans the training itself)";
    if (argument.role == ArgumentRole::Param)
      graph.parameterCount += argument.type.getNumElements();
    if (argument.role != ArgumentRole::Input &&
        argument.role != ArgumentRole::Label)
      continue;
    batchScaled.insert(value);
    tokenDims[value] = SmallVector<bool>(argument.type.getRank(), true);
    if (argument.type.getRank() > 0)
      graph.batch = argument.type.getDimSize(0);
  }

  // Segments from parameter names.
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> layerOf; // -1: outside the layers
  llvm::DenseMap<Value, int64_t> valueLayer;
  bool seenLayer = false;
  SmallVector<Operation *> preOps, postOps;
  std::map<int64_t, SmallVector<Operation *>> layerOps;
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
    if (!ruleOp)
      return emitError(op.getLoc())
             << "'" << op.getName()
             << "' has no sharding rule, so the planner cannot place it";
    std::optional<int64_t> layer;
    bool usesOtherParams = false;
    for (Value operand : op.getOperands()) {
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        auto name = func.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), ParcDialect::kNameAttrName);
        auto role = func.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), ParcDialect::kRoleAttrName);
        if (!role || role.getValue() != "param")
          continue;
        if (std::optional<int64_t> index = getLayerIndex(name.getValue()))
          layer = std::max(layer.value_or(*index), *index);
        else
          usesOtherParams = true;
      }
    }
    if (!layer && !usesOtherParams)
      for (Value operand : op.getOperands()) {
        auto it = valueLayer.find(operand);
        if (it != valueLayer.end() && it->second >= 0)
          layer = std::max(layer.value_or(it->second), it->second);
      }
    int64_t index = layer ? *layer : -1;
    for (Value result : op.getResults())
      valueLayer[result] = index;
    if (layer) {
      seenLayer = true;
      layerOps[*layer].push_back(&op);
    } else {
      (seenLayer ? postOps : preOps).push_back(&op);
    }
    if (auto flops = dyn_cast<FlopCountOpInterface>(op))
      graph.forwardFlops += flops.getFlopCount();
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

  FailureOr<llvm::DenseSet<Value>> saved = findSavedValues(func);
  graph.exactBackward = succeeded(saved);

  // Nodes: ops before the layers, one layer of each class, ops after.
  llvm::DenseMap<Operation *, int64_t> nodeOfOp;
  auto addOpNode = [&](Operation *op, Segment segment, int64_t instances) {
    GraphNode node{GraphNode::Op};
    node.op = op;
    node.rule = cast<ShardingRuleOpInterface>(op).getShardingRule();
    node.segment = segment;
    node.instances = instances;
    node.tokenFactors = tokenFactorsOf.lookup(op);
    for (Value result : op->getResults()) {
      node.savedForBackward.push_back(!graph.exactBackward ||
                                      saved->contains(result));
      node.batchScaled.push_back(batchScaled.contains(result));
    }
    graph.nodes.push_back(std::move(node));
    return static_cast<int64_t>(graph.nodes.size() - 1);
  };
  auto instancesOf = [&](int64_t layerClass) {
    return static_cast<int64_t>(llvm::count(graph.layerClasses, layerClass));
  };

  // Batch dependence and token dimensions flow through every op in order
  // (all instances, not only representatives).
  for (Operation &op : func.getBody().front()) {
    auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
    if (!ruleOp)
      continue;
    ShardingRule rule = ruleOp.getShardingRule();
    SmallVector<bool> token(rule.getFactors().size(), false);
    bool scaled = false;
    for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
      scaled |= batchScaled.contains(operand);
      auto it = tokenDims.find(operand);
      if (it == tokenDims.end())
        continue;
      for (auto [dim, factors] : llvm::enumerate(rule.getOperands()[index]))
        if (dim < it->second.size() && it->second[dim])
          for (int64_t factor : factors)
            token[factor] = true;
    }
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      if (scaled)
        batchScaled.insert(result);
      SmallVector<bool> dims;
      for (const DimFactors &factors : rule.getResults()[index])
        dims.push_back(llvm::any_of(
            factors, [&](int64_t factor) { return token[factor]; }));
      tokenDims[result] = std::move(dims);
    }
    tokenFactorsOf[&op] = std::move(token);
  }

  for (Operation *op : preOps)
    nodeOfOp[op] = addOpNode(op, {Segment::Pre}, 1);
  for (auto [layerClass, opsOfClass] : llvm::enumerate(representatives)) {
    int64_t count = instancesOf(layerClass);
    Segment segment{Segment::Layer, static_cast<int64_t>(layerClass)};
    for (Operation *op : opsOfClass)
      nodeOfOp[op] = addOpNode(op, segment, count);
    graph.layerOutputs[layerClass] = nodeOfOp[opsOfClass.back()];
  }
  for (Operation *op : postOps)
    nodeOfOp[op] = addOpNode(op, {Segment::Post}, 1);
  auto nodeOf = [&](Operation *op) {
    auto it = position.find(op);
    if (it == position.end())
      return nodeOfOp.lookup(op);
    return nodeOfOp.lookup(representatives[it->second.first][it->second.second]);
  };

  // Arguments become nodes where they are first used; a layer's parameter
  // shares the node of the same parameter in the other layers of its class,
  // and a parameter used twice (a tied embedding) has one node.
  llvm::DenseMap<Value, int64_t> argumentNodes;
  std::map<std::pair<int64_t, unsigned>, int64_t> layerArgumentNodes;
  std::map<std::tuple<int64_t, unsigned, int64_t, unsigned>, int64_t>
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
    auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kRoleAttrName);
    GraphNode node{role && role.getValue() == "param" ? GraphNode::Param
                                                      : GraphNode::Input};
    node.argument = argument;
    node.segment = graph.nodes[consumer].segment;
    node.instances = inLayer ? graph.nodes[consumer].instances : 1;
    node.batchScaled.push_back(batchScaled.contains(argument));
    graph.nodes.push_back(std::move(node));
    int64_t index = graph.nodes.size() - 1;
    if (inLayer)
      layerArgumentNodes[key] = index;
    return argumentNodes[argument] = index;
  };
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    int64_t consumer = nodeOf(&op);
    graph.opNodes[&op] = consumer;
    for (auto [operandIndex, operand] : llvm::enumerate(op.getOperands())) {
      int64_t producer;
      unsigned result = 0;
      if (auto argument = dyn_cast<BlockArgument>(operand)) {
        producer = argumentNode(argument, &op, consumer, operandIndex);
        graph.argumentNodes[argument.getArgNumber()] = producer;
      } else {
        producer = nodeOf(operand.getDefiningOp());
        result = cast<OpResult>(operand).getResultNumber();
      }
      auto key = std::make_tuple(producer, result, consumer,
                                 unsigned(operandIndex));
      auto [it, added] = edgeIndex.try_emplace(key, graph.edges.size());
      if (added)
        graph.edges.push_back(
            {producer, result, consumer, unsigned(operandIndex), 0});
      ++graph.edges[it->second].uses;
    }
  }
  return graph;
}
