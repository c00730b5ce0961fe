//===- ModelGraph.h - the planner's view of a model function ----*- C++ -*-===//
//
// What the planner needs to know about a forward (loss) function before it
// chooses anything: which ops form the repeated layers (a layer is the ops
// that use parameters named `<prefix>.<index>.<...>`), which layers share a
// structure (solved once), which tensors scale with the batch, which factors
// span the token dimensions (sequence parallelism shards those), and which
// forward tensors the backward pass reads (from autodiff on a copy).
//
// Nodes are what the strategy ILP chooses for: one per op or parameter of the
// part before the layers, of one layer of each structure, and of the part
// after them; a node stands for `instances` ops of the model.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_MODELGRAPH_H
#define PARC_PLAN_MODELGRAPH_H

#include "parc/IR/ParcInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <string>
#include <tuple>

namespace mlir::parc {

/// Where a node's ops sit: before the layers, in layer class `layerClass`,
/// or after the layers.
struct Segment {
  enum Kind { Pre, Layer, Post } kind = Pre;
  int64_t layerClass = -1;
  bool operator<(const Segment &other) const {
    return std::tie(kind, layerClass) < std::tie(other.kind, other.layerClass);
  }
  bool operator==(const Segment &other) const {
    return kind == other.kind && layerClass == other.layerClass;
  }
};

struct GraphNode {
  enum Kind { Op, Param, Input } kind;
  /// The representative op (Op nodes).
  Operation *op = nullptr;
  ShardingRule rule;
  /// The representative argument (Param and Input nodes).
  BlockArgument argument;
  Segment segment;
  /// Ops (or parameters) of the model this node stands for.
  int64_t instances = 1;
  /// Factors of `rule` that span token (batch, sequence) dimensions.
  SmallVector<bool> tokenFactors;
  /// Per result: whether the backward pass reads it.
  SmallVector<bool> savedForBackward;
  /// Per result (the argument for Param/Input): whether it scales with the
  /// batch.
  SmallVector<bool> batchScaled;
};

/// A use of a node's result by a node's operand; `uses` counts the model's
/// uses it stands for.
struct GraphEdge {
  int64_t producer;
  unsigned result;
  int64_t consumer;
  unsigned operand;
  int64_t uses = 0;
};

class ModelGraph {
public:
  /// Analyzes `func`; fails with a diagnostic on a function that is not a
  /// model (no scalar loss, an op without a sharding rule).
  static FailureOr<ModelGraph> build(func::FuncOp func);

  func::FuncOp getFunction() const { return func; }
  ArrayRef<GraphNode> getNodes() const { return nodes; }
  ArrayRef<GraphEdge> getEdges() const { return edges; }
  /// The class of each layer, in model order.
  ArrayRef<int64_t> getLayerClasses() const { return layerClasses; }
  int64_t getNumLayers() const { return layerClasses.size(); }
  /// The batch of the model as written (dimension 0 of its inputs).
  int64_t getBatch() const { return batch; }
  /// The node producing each layer class's output (the value the next
  /// layer reads), for point-to-point sizes between pipeline stages.
  int64_t getLayerOutputNode(int64_t layerClass) const {
    return layerOutputs.lookup(layerClass);
  }
  /// Whether autodiff could build the backward pass (else every forward
  /// tensor counts as saved).
  bool hasExactBackward() const { return exactBackward; }
  /// The node of an op of the model, or of argument `index`.
  int64_t getOpNode(Operation *op) const { return opNodes.lookup(op); }
  std::optional<int64_t> getArgumentNode(unsigned index) const {
    auto it = argumentNodes.find(index);
    if (it == argumentNodes.end())
      return std::nullopt;
    return it->second;
  }
  int64_t getParameterCount() const { return parameterCount; }
  int64_t getForwardFlops() const { return forwardFlops; }

private:
  func::FuncOp func;
  std::vector<GraphNode> nodes;
  SmallVector<GraphEdge> edges;
  SmallVector<int64_t> layerClasses;
  llvm::DenseMap<int64_t, int64_t> layerOutputs;
  llvm::DenseMap<Operation *, int64_t> opNodes;
  llvm::DenseMap<unsigned, int64_t> argumentNodes;
  int64_t batch = 1;
  bool exactBackward = true;
  int64_t parameterCount = 0;
  int64_t forwardFlops = 0;
};

} // namespace mlir::parc

#endif // PARC_PLAN_MODELGRAPH_H
