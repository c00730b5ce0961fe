//===- StrategyIlp.h - per-op sharding strategies by ILP --------*- C++ -*-===//
//
// Inside one pipeline stage, every op of the training graph (forward and
// backward) chooses where the tensor axis `tp` goes: on none of its
// factors, or on one factor its sharding rule allows (a reduction factor
// leaves partial sums). Every parameter chooses a layout, and its gradient
// must arrive in it. Between a producer and a consumer, the layouts they
// imply are reconciled by planResharding, the partitioner's own logic, so
// the collectives priced are the ones parc-compile inserts. An ILP (COIN-OR
// CBC) picks the
// strategies with the least compute plus communication time, as Alpa does;
// layers of one structure share their variables, so a 96-layer model is one
// layer's problem. Megatron's column- then row-parallel pattern is the
// optimum it finds, not a template.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_STRATEGYILP_H
#define PARC_PLAN_STRATEGYILP_H

#include "parc/Plan/CostModel.h"
#include "parc/Plan/ModelGraph.h"
#include "parc/Transforms/FactorSharding.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>

namespace mlir::parc {

struct StrategyConfig {
  int64_t tp = 1;
  /// Samples per micro-batch on one data-parallel rank.
  int64_t microBatch = 1;
  /// Whether tp may split token (batch and sequence) factors.
  bool sequenceParallel = false;
  /// Micro-batches per optimizer step: the optimizer's update, which a
  /// parameter's layout shrinks, runs once for this many.
  int64_t microbatchesPerStep = 1;
  auto key() const {
    return std::make_tuple(tp, microBatch, sequenceParallel,
                           microbatchesPerStep);
  }
};

/// Per micro-batch and per instance (one layer of a class, or the whole part
/// before or after the layers), on one rank.
struct SegmentCost {
  double forwardTime = 0;
  double backwardTime = 0;
  /// Collectives over tp, forward and backward, but the reshardings of
  /// invariant values.
  double communicationTime = 0;
  double communicationBytes = 0;
  /// Reshardings of invariant values (GraphNode::invariant: a tied
  /// embedding gathered for the lookup), per step rather than per
  /// micro-batch: they read no micro-batch, so the pipeline runs them once
  /// per step (under ZeRO-3 once per micro-batch: the search multiplies).
  double stepCommunicationTime = 0;
  double stepCommunicationBytes = 0;
  /// The bytes of those reshardings' copies: with several micro-batches
  /// they are made once and held through the step (the search adds them
  /// for such plans; the peaks count them as their readers' temporaries
  /// where the strategy's micro-batches per step are one).
  double parameterCopyBytes = 0;
  /// What runs again when the compiler recomputes every layer selectively,
  /// or fully: the recomputed ops' own collectives and the reshardings of
  /// their operands (the partitioner reshards for a recomputed op anew
  /// rather than keep the forward's copy alive), and their reads of
  /// parameters (`parameterReads`: ZeRO-3 gathers them anew).
  struct Recomputed {
    double communicationTime = 0, communicationBytes = 0, parameterReads = 0;
    double stepCommunicationTime = 0, stepCommunicationBytes = 0;
  };
  Recomputed selectiveRecompute, fullRecompute;
  /// Forward tensors the backward pass reads.
  double activationBytes = 0;
  /// What the weight-gradient ops read (saved activations and output
  /// gradients): a zero-bubble schedule holds it for each micro-batch whose
  /// weight gradients it defers.
  double deferredBytes = 0;
  /// The part of it only tied parameters' weight-gradient ops read
  /// (GraphNode::tiedGradient).
  double tiedDeferredBytes = 0;
  /// What the backward pass reads when the compiler recomputes every layer
  /// selectively (it keeps what ops that read parameters make and what the
  /// parameter-free ops it runs again, at `parameterFreeForwardTime`, read
  /// from outside them) or fully (it keeps what crosses the layer's
  /// boundary).
  double selectiveActivationBytes = 0, fullActivationBytes = 0;
  double parameterFreeForwardTime = 0;
  /// The most bytes held at once while the segment's forward, and its
  /// backward, ops run, beyond the model state, the activations other
  /// segments keep and the gradients they hold: the segment's own tensors
  /// and those flowing through it, from a sweep over the training graph
  /// under the chosen layouts. `savedBytes` is the part of it that is the
  /// segment's own saved activations (recomputed, under recomputation).
  struct Peak {
    double bytes = 0, savedBytes = 0;
  };
  Peak forwardPeak, backwardPeak;
  /// The same with the parameters each op reads held whole over dp as it
  /// runs (ZeRO-3 gathers them for the op; an op that reads none, such as
  /// a weight's gradient, needs none).
  Peak forwardGatheredPeak, backwardGatheredPeak;
  /// The segment's output (what a pipeline stage sends).
  double outputBytes = 0;
  double parameters = 0;
  /// The parameter elements the segment's ops read, each as often as ops
  /// read it (a weight by its forward and input-gradient matmuls, a tied
  /// embedding by the lookup and the LM head's two): what ZeRO-3, which
  /// gathers a parameter for each use, gathers.
  double parameterReads = 0;
  /// Parameters of an earlier segment this one uses too (a tied LM head):
  /// a pipeline stage that holds only this segment keeps its own copy.
  double sharedParameters = 0;
  double forwardFlops = 0;
};

struct StrategySolution {
  StrategyConfig config;
  bool feasible = true;
  std::map<Segment, SegmentCost> segments;
  /// Per node: the layout of each result (Op nodes) or of the argument, and
  /// the factor tp splits (-1 for none or for arguments).
  SmallVector<SmallVector<TensorSharding>> layouts;
  /// Per Op node: the layout in which it reads each operand (empty for
  /// arguments); where it differs from the producer's, the edge reshards.
  SmallVector<SmallVector<TensorSharding>> operandLayouts;
  SmallVector<int64_t> splitFactors;
  /// Whether a token factor ended up split (sequence parallelism).
  bool usesSequenceParallel = false;
  /// The share of the FLOPs in ops tp cannot split at all, and the op with
  /// the most of them.
  std::string unsplitOp;
  double unsplitOpFlopShare = 0;
  double unsplitFlopShare = 0;
  /// The share of the FLOPs in ops the chosen strategies split over tp.
  double splitFlopShare = 0;
  double objective = 0;
  /// The most elements of one parameter on a rank.
  double largestParameter = 0;
  int64_t variables = 0;
};

class StrategyIlp {
public:
  /// Tensors are priced at their types in `graph`'s training graph, which
  /// has the planned precision's (ModelGraph::build).
  StrategyIlp(const ModelGraph &graph, const CostModel &costs);

  /// Solves (or returns the cached solution for) `config`.
  const StrategySolution &solve(const StrategyConfig &config);
  /// Solves those of `configs` not solved yet, in parallel on the context's
  /// threads (each solve is independent, so the solutions are the same as
  /// one by one); `solve` then finds them.
  void solveAll(ArrayRef<StrategyConfig> configs);

  /// Distinct configurations solved so far.
  int64_t getNumSolved() const { return cache.size(); }

  /// The mesh `[tp = size]` layouts refer to.
  dist::MeshOp getMesh(int64_t tp);

private:
  void solveInto(const StrategyConfig &config, dist::MeshOp mesh,
                 StrategySolution &solution) const;

  const ModelGraph &graph;
  const CostModel &costs;
  OwningOpRef<ModuleOp> meshes;
  std::map<std::tuple<int64_t, int64_t, bool, int64_t>, StrategySolution> cache;
};

} // namespace mlir::parc

#endif // PARC_PLAN_STRATEGYILP_H
