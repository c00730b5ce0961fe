//===- ModelGraph.h - the planner's view of a model function ----*- C++ -*-===//
//
// What the planner needs to know about a forward (loss) function before it
// chooses anything. It works on the training graph: a copy of the function
// with its backward pass appended by autodiff (the ops parc-compile's train
// step runs, without the optimizer update, which the cost model prices per
// step). From it: which ops form the repeated layers (an op belongs to the
// layer of the parameters `<prefix>.<index>.<...>` it reads, else to the
// latest layer among its operands), which layers share a structure (solved
// once), which tensors and FLOPs scale with the batch, which factors span the
// token dimensions (sequence parallelism shards those), and which forward
// tensors the backward pass reads.
//
// Nodes are what the strategy ILP chooses for: one per op or parameter of the
// part before the layers, of one layer of each structure, and of the part
// after them; a node stands for `instances` ops of the model. The gradient of
// each parameter ends in an edge to the parameter's node: the update needs
// it in the parameter's layout.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_MODELGRAPH_H
#define PARC_PLAN_MODELGRAPH_H

#include "parc/IR/ParcInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

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
  /// Factors of `rule` that span token (batch, sequence) dimensions, and
  /// those that span the batch dimension (the op's FLOPs scale with them).
  SmallVector<bool> tokenFactors;
  SmallVector<bool> batchFactors;
  /// Whether the op belongs to the backward pass.
  bool backward = false;
  /// Whether its value depends on no input, only on parameters and
  /// constants (a parameter, a weight's cast): a pipeline computes it, and
  /// reshards it, once per step rather than per micro-batch.
  bool invariant = false;
  /// Whether the backward op makes only parts of parameters' gradients: a
  /// zero-bubble schedule defers it, and holds what it reads meanwhile.
  bool weightGradient = false;
  /// Whether such an op of the part after the layers makes a part of a
  /// tied parameter's gradient, which the part before them takes (a tied
  /// LM head's): under ZeRO-2 and -3 a pipeline's last stage sends it with
  /// every micro-batch rather than defer it.
  bool tiedGradient = false;
  /// Per result: whether the backward pass reads it, and whether it still
  /// does when every layer is recomputed, selectively or fully.
  SmallVector<bool> savedForBackward, keptSelective, keptFull;
  /// Whether the backward pass runs the op again when every layer is
  /// recomputed, selectively or fully: its collectives, and the reshardings
  /// of its operands, run again too.
  bool recomputedSelective = false, recomputedFull = false;
  /// Per result (the argument for Param/Input), and per operand: whether it
  /// scales with the batch.
  SmallVector<bool> batchScaled;
  SmallVector<bool> operandBatchScaled;
};

/// A tensor of the training graph, for the peak of memory. Positions count
/// the training graph's ops in program order; owners number the parts a
/// rank may hold: 0 before the layers (and the backward ops after the last
/// layer's), 1..L the layers in model order, L + 1 after the layers.
struct LiveTensor {
  /// The node and result whose layout and bytes it has.
  int64_t node;
  unsigned result;
  /// Positions of the op that writes it and of the last op that reads it
  /// (the op before, where that op writes a result over it).
  int64_t start, end;
  int64_t owner;
  /// A forward tensor the backward pass reads, or a parameter's gradient
  /// (or a part of one the backward pass adds to it later): what the
  /// owner's segment holds while other segments run. Anything else is a
  /// temporary of the segment.
  enum Kind { Temporary, Saved, Gradient } kind;
};

/// An op of the training graph at its position.
struct LiveOp {
  int64_t node;
  int64_t owner;
  bool backward;
  /// The parameter nodes it reads (ZeRO-3 gathers them for it).
  SmallVector<int64_t, 2> parameterNodes;
  /// Its position among the parc ops (getPlanPositionedOps), which the
  /// train step --parc-make-train-step builds shares for its forward and
  /// backward ops; -1 for another dialect's op.
  int64_t planPosition = -1;
};

/// A use of a node's result by a node's operand; `uses` counts the model's
/// uses it stands for.
struct GraphEdge {
  int64_t producer;
  unsigned result;
  int64_t consumer;
  unsigned operand;
  int64_t uses = 0;
  /// The consumer is a parameter's node and the value its gradient: it is
  /// wanted in the parameter's own layout.
  bool toParameterLayout = false;
};

class ModelGraph {
public:
  /// Analyzes `func`; fails with a diagnostic on a function that is not a
  /// model (no scalar loss, an op without a sharding rule). With
  /// `mixedPrecision`, the training graph is typed as a bf16-mixed train
  /// step is (MixedPrecision.h), so each tensor's bytes are its own.
  static FailureOr<ModelGraph> build(func::FuncOp func,
                                     bool mixedPrecision = false);

  /// The forward function as given.
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
  /// The node of an op of the forward function, or of argument `index`.
  int64_t getOpNode(Operation *op) const { return opNodes.lookup(op); }
  /// The plan position ("@N") of an op of the forward function in the train
  /// step: its own position, or after the casts mixed precision inserts.
  int64_t getPlanPosition(Operation *op) const {
    return planPositions.lookup_or(op, -1);
  }
  std::optional<int64_t> getArgumentNode(unsigned index) const {
    auto it = argumentNodes.find(index);
    if (it == argumentNodes.end())
      return std::nullopt;
    return it->second;
  }
  /// The training graph's tensors (not its arguments) and ops, in program
  /// order, and the segment each owner's ops belong to.
  ArrayRef<LiveTensor> getLiveTensors() const { return liveTensors; }
  ArrayRef<LiveOp> getLiveOps() const { return liveOps; }
  Segment getOwnerSegment(int64_t owner) const;
  int64_t getParameterCount() const { return parameterCount; }
  int64_t getForwardFlops() const { return forwardFlops; }

private:
  func::FuncOp func;
  /// The training graph the nodes point into.
  OwningOpRef<ModuleOp> training;
  std::vector<GraphNode> nodes;
  SmallVector<GraphEdge> edges;
  SmallVector<int64_t> layerClasses;
  llvm::DenseMap<int64_t, int64_t> layerOutputs;
  llvm::DenseMap<Operation *, int64_t> opNodes;
  llvm::DenseMap<Operation *, int64_t> planPositions;
  llvm::DenseMap<unsigned, int64_t> argumentNodes;
  std::vector<LiveTensor> liveTensors;
  std::vector<LiveOp> liveOps;
  int64_t batch = 1;
  int64_t parameterCount = 0;
  int64_t forwardFlops = 0;
};

} // namespace mlir::parc

#endif // PARC_PLAN_MODELGRAPH_H
