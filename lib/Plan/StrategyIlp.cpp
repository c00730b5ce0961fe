//===- StrategyIlp.cpp - per-op sharding strategies by ILP ----------------===//
//
// Variables (Alpa's formulation): x[n][s] = 1 when node n takes strategy s,
// one per node; y[e][s1][s2] for each edge and compatible strategy pair,
// tied to x by sum_s2 y = x[producer][s1] and sum_s1 y = x[consumer][s2].
// Pairs that no resharding can connect have no y, so they cannot be chosen
// together. Times are in microseconds to keep CBC's tolerances meaningful.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/StrategyIlp.h"

#include "parc/Transforms/LocalPartitionOpInterface.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/Resharding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"

#include <map>
#include <set>

#include "CbcModel.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"

using namespace mlir;
using namespace mlir::parc;

namespace {

/// One choice of a node and what it implies.
struct Candidate {
  /// The factor tp splits (Op nodes), -1 for none.
  int64_t factor = -1;
  SmallVector<TensorSharding> operandLayouts;
  SmallVector<TensorSharding> resultLayouts;
  double time = 0;
  double flops = 0;
  double opBytes = 0;
  /// The collectives of the op's own local algorithm (a vocab-parallel
  /// loss's normalizer): their time and ring traffic.
  double communicationTime = 0;
  double communicationBytes = 0;
};

constexpr double kMicroseconds = 1e6;

} // namespace

StrategyIlp::StrategyIlp(const ModelGraph &graph, const CostModel &costs)
    : graph(graph), costs(costs),
      meshes(ModuleOp::create(graph.getFunction().getLoc())) {
  meshes->getContext()->getOrLoadDialect<dist::DistDialect>();
}

dist::MeshOp StrategyIlp::getMesh(int64_t tp) {
  std::string name = "tp" + std::to_string(tp);
  if (auto mesh = meshes->lookupSymbol<dist::MeshOp>(name))
    return mesh;
  OpBuilder builder(meshes->getContext());
  builder.setInsertionPointToEnd(meshes->getBody());
  return dist::MeshOp::create(
      builder, meshes->getLoc(), name,
      builder.getArrayAttr({builder.getStringAttr("tp")}),
      builder.getDenseI64ArrayAttr({tp}));
}

/// Counts what `node` does (its own collectives, or a resharding of an
/// operand, or its reads of parameters) again under each recomputation that
/// runs it again.
static void addRecomputed(SegmentCost &segment, const GraphNode &node,
                          const SegmentCost::Recomputed &done) {
  for (auto [recomputed, again] :
       {std::pair{node.recomputedSelective, &segment.selectiveRecompute},
        std::pair{node.recomputedFull, &segment.fullRecompute}})
    if (recomputed) {
      again->communicationTime += done.communicationTime;
      again->communicationBytes += done.communicationBytes;
      again->parameterReads += done.parameterReads;
      again->stepCommunicationTime += done.stepCommunicationTime;
      again->stepCommunicationBytes += done.stepCommunicationBytes;
    }
}

/// The peaks of each segment's forward and backward pass (SegmentCost):
/// one sweep over the training graph's tensors in program order. At each op
/// the tensors of its owner, and the temporaries of any, count; the saved
/// activations and gradients of other owners are what those hold. An op
/// also holds the copies its operands are resharded into where that makes
/// a new buffer (`copyBytes` per node); with its parameters gathered
/// (ZeRO-3), also the copies of those it reads resharded
/// (`gatheredCopyBytes`: ZeRO-3 reshards each micro-batch's gathered copy
/// for its reader, where without it the copy is held through the step).
static void measurePeaks(const ModelGraph &graph, StrategySolution &solution,
                         llvm::function_ref<double(int64_t, unsigned)> bytesOf,
                         ArrayRef<double> copyBytes,
                         ArrayRef<double> gatheredCopyBytes) {
  ArrayRef<LiveTensor> tensors = graph.getLiveTensors();
  ArrayRef<LiveOp> ops = graph.getLiveOps();
  int64_t owners = graph.getNumLayers() + 2;
  // What starts and stops being live at each position.
  std::vector<SmallVector<int64_t>> starting(ops.size() + 1),
      ending(ops.size() + 1);
  std::vector<double> bytes(tensors.size());
  for (auto [index, tensor] : llvm::enumerate(tensors)) {
    bytes[index] = bytesOf(tensor.node, tensor.result);
    starting[tensor.start].push_back(index);
    ending[std::min<int64_t>(tensor.end + 1, ops.size())].push_back(index);
  }
  double live = 0, held = 0;
  std::vector<double> heldBy(owners, 0), savedBy(owners, 0);
  auto update = [&](int64_t index, double sign) {
    const LiveTensor &tensor = tensors[index];
    live += sign * bytes[index];
    if (tensor.kind == LiveTensor::Temporary)
      return;
    held += sign * bytes[index];
    heldBy[tensor.owner] += sign * bytes[index];
    if (tensor.kind == LiveTensor::Saved)
      savedBy[tensor.owner] += sign * bytes[index];
  };
  for (auto [position, op] : llvm::enumerate(ops)) {
    for (int64_t index : ending[position])
      update(index, -1);
    for (int64_t index : starting[position])
      update(index, +1);
    SegmentCost &cost = solution.segments[graph.getOwnerSegment(op.owner)];
    double own = live - (held - heldBy[op.owner]) + copyBytes[op.node];
    double gathered = gatheredCopyBytes[op.node];
    for (int64_t parameter : op.parameterNodes)
      gathered += bytesOf(parameter, 0);
    auto raise = [&](SegmentCost::Peak &peak, double bytes) {
      if (bytes > peak.bytes)
        peak = {bytes, savedBy[op.owner]};
    };
    raise(op.backward ? cost.backwardPeak : cost.forwardPeak, own);
    raise(op.backward ? cost.backwardGatheredPeak : cost.forwardGatheredPeak,
          own + gathered);
  }
}

const StrategySolution &StrategyIlp::solve(const StrategyConfig &config) {
  auto key = config.key();
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  StrategySolution &solution = cache[key];
  solveInto(config, getMesh(config.tp), solution);
  return solution;
}

void StrategyIlp::solveAll(ArrayRef<StrategyConfig> configs) {
  // The meshes and the cache's slots are made first, on this thread: each
  // solve then writes only its own slot, and reads the graph, the cost
  // model and the context (whose uniquing is thread-safe).
  std::vector<std::tuple<StrategyConfig, dist::MeshOp, StrategySolution *>>
      unsolved;
  for (const StrategyConfig &config : configs) {
    auto [slot, inserted] = cache.try_emplace(config.key());
    if (inserted)
      unsolved.emplace_back(config, getMesh(config.tp), &slot->second);
  }
  mlir::parallelForEach(meshes->getContext(), unsolved, [&](auto &entry) {
    auto &[config, mesh, solution] = entry;
    solveInto(config, mesh, *solution);
  });
}

void StrategyIlp::solveInto(const StrategyConfig &config, dist::MeshOp mesh,
                            StrategySolution &solution) const {
  solution.config = config;
  StringAttr tpAxis = StringAttr::get(mesh.getContext(), "tp");
  double batchScale = double(config.microBatch) / graph.getBatch();

  auto scaleOf = [&](bool batchScaled) {
    return batchScaled ? batchScale : 1.0;
  };
  auto localBytes = [&](Type type, const TensorSharding &layout,
                        bool batchScaled) {
    auto ranked = cast<RankedTensorType>(type);
    return getTensorBytes(layout.getLocalType(ranked, mesh)) *
           scaleOf(batchScaled);
  };
  GroupPlacement tpGroup{config.tp, 1};

  // Candidates of every node.
  ArrayRef<GraphNode> nodes = graph.getNodes();
  std::vector<std::vector<Candidate>> candidates(nodes.size());
  double totalFlops = 0;
  for (auto [index, node] : llvm::enumerate(nodes)) {
    std::vector<Candidate> &list = candidates[index];
    if (node.kind != GraphNode::Op) {
      auto type = cast<RankedTensorType>(node.argument.getType());
      list.push_back({});
      list.back().resultLayouts.push_back(
          TensorSharding::replicated(type.getRank()));
      if (node.kind == GraphNode::Input || config.tp == 1)
        continue;
      for (int64_t dim = 0; dim < type.getRank(); ++dim) {
        if (type.getDimSize(dim) % config.tp != 0)
          continue;
        TensorSharding layout = TensorSharding::replicated(type.getRank());
        layout.dims[dim].push_back(tpAxis);
        Candidate candidate;
        candidate.resultLayouts.push_back(layout);
        list.push_back(candidate);
      }
      // A parameter's layout decides how much of the optimizer's update
      // each rank runs: this micro-batch's share of it.
      if (node.kind == GraphNode::Param)
        for (Candidate &candidate : list) {
          double elements = candidate.resultLayouts[0]
                                .getLocalType(type, mesh)
                                .getNumElements();
          bool mixed = type.getElementType().getIntOrFloatBitWidth() == 16;
          candidate.time = costs.getOptimizerTime(elements, mixed, 1) /
                           config.microbatchesPerStep;
        }
      continue;
    }
    const ShardingRule &rule = node.rule;
    Operation *op = node.op;
    bool scaled =
        llvm::any_of(node.batchFactors, [](bool spans) { return spans; });
    double flops = 0;
    if (auto counted = dyn_cast<FlopCountOpInterface>(op))
      flops = counted.getFlopCount() * (scaled ? batchScale : 1.0);
    totalFlops += flops * node.instances;
    SmallVector<int64_t> factorChoices = {-1};
    if (config.tp > 1)
      for (auto [factor, info] : llvm::enumerate(rule.getFactors()))
        if (info.kind != FactorKind::Replicated &&
            info.size % config.tp == 0 &&
            (config.sequenceParallel || !node.tokenFactors[factor]))
          factorChoices.push_back(factor);
    // Prices a candidate whose layouts are set: its kernel's time over the
    // bytes it touches per rank, and its own local collectives.
    auto price = [&](Candidate &candidate, const FactorAxes &axes) {
      double bytes = 0;
      for (auto [i, operand] : llvm::enumerate(op->getOperands()))
        bytes += localBytes(operand.getType(), candidate.operandLayouts[i],
                            node.operandBatchScaled[i]);
      for (auto [i, result] : llvm::enumerate(op->getResults()))
        bytes += localBytes(result.getType(), candidate.resultLayouts[i],
                            node.batchScaled[i]);
      // An unfused implementation also moves its intermediates, split as
      // its first operand is.
      if (auto unfused = dyn_cast<UnfusedTrafficOpInterface>(op);
          unfused && costs.pricesUnfusedKernels() && op->getNumOperands()) {
        auto first = cast<RankedTensorType>(op->getOperand(0).getType());
        double share =
            double(candidate.operandLayouts[0].getLocalType(first, mesh)
                       .getNumElements()) /
            std::max<int64_t>(1, first.getNumElements());
        bytes += unfused.getUnfusedIntermediateElements(
                     costs.pricesAttentionDropout()) *
                 share * (node.operandBatchScaled[0] ? batchScale : 1.0) *
                 std::max<int64_t>(1, first.getElementTypeBitWidth() / 8);
      }
      candidate.flops = candidate.factor >= 0 ? flops / config.tp : flops;
      candidate.opBytes = bytes;
      candidate.time = costs.getKernelTime(candidate.flops, bytes,
                                           isa<UnfusedTrafficOpInterface>(op));
      if (auto local = dyn_cast<LocalPartitionOpInterface>(op))
        for (int64_t buffer : local.getLocalAllReduceBytes(axes, mesh)) {
          double scaled = buffer * scaleOf(node.operandBatchScaled[0]);
          candidate.communicationTime += costs.getCollectiveTime(
              dist::CollectiveKind::AllReduce, scaled, tpGroup);
          candidate.communicationBytes += dist::getRingTrafficBytes(
              dist::CollectiveKind::AllReduce, static_cast<int64_t>(scaled),
              config.tp);
        }
    };
    for (int64_t factor : factorChoices) {
      FactorAxes axes(rule.getFactors().size());
      if (factor >= 0) {
        axes[factor].push_back(tpAxis);
        legalizeFactorAxes(rule, axes, mesh);
        if (axes[factor].empty())
          continue;
      }
      Candidate candidate;
      candidate.factor = factor;
      for (unsigned i = 0; i < op->getNumOperands(); ++i)
        candidate.operandLayouts.push_back(deriveTensorSharding(
            rule, rule.getOperands()[i], axes, /*isResult=*/false));
      for (unsigned i = 0; i < op->getNumResults(); ++i)
        candidate.resultLayouts.push_back(deriveTensorSharding(
            rule, rule.getResults()[i], axes, /*isResult=*/true));
      price(candidate, axes);
      list.push_back(std::move(candidate));
    }
    // A linear op passes pending sums on, as partitioning defers their
    // all_reduce past it: the input gradients of q, k and v (of gate and
    // up) are summed on each rank and all-reduced once, not each.
    if (auto linear = dyn_cast<SumsPartialsOpInterface>(op);
        linear && config.tp > 1 && linear.defersPendingSums()) {
      auto pending = [&](Value value) {
        TensorSharding layout = TensorSharding::replicated(
            cast<RankedTensorType>(value.getType()).getRank());
        layout.partial.push_back(tpAxis);
        return layout;
      };
      Candidate candidate;
      for (Value operand : op->getOperands())
        candidate.operandLayouts.push_back(pending(operand));
      for (Value result : op->getResults())
        candidate.resultLayouts.push_back(pending(result));
      price(candidate, FactorAxes(rule.getFactors().size()));
      list.push_back(std::move(candidate));
    }
    bool split = llvm::any_of(
        list, [](const Candidate &candidate) { return candidate.factor >= 0; });
    if (!split && config.tp > 1) {
      solution.unsplitFlopShare += flops * node.instances;
      if (flops * node.instances > solution.unsplitOpFlopShare) {
        solution.unsplitOpFlopShare = flops * node.instances;
        solution.unsplitOp = op->getName().getStringRef().str();
      }
    }
  }
  if (totalFlops > 0) {
    solution.unsplitFlopShare /= totalFlops;
    solution.unsplitOpFlopShare /= totalFlops;
  }

  // Edge costs: the resharding between producer and consumer.
  auto reshardTime = [&](Type type, bool scaled, const TensorSharding &from,
                         const TensorSharding &to, double &bytes) {
    std::string whyNot;
    FailureOr<SmallVector<ReshardStep>> steps = planResharding(
        mesh, cast<RankedTensorType>(type), from, to, whyNot);
    if (failed(steps))
      return std::optional<double>();
    double time = 0;
    for (const ReshardStep &step : *steps) {
      double stepBytes = step.bufferBytes * scaleOf(scaled);
      bytes += dist::getRingTrafficBytes(step.kind,
                                         static_cast<int64_t>(stepBytes),
                                         step.groupSize);
      time += costs.getCollectiveTime(step.kind, stepBytes, tpGroup);
    }
    return std::optional<double>(time);
  };
  struct PairCost {
    unsigned from, to;
    double time, bytes;
  };
  ArrayRef<GraphEdge> edges = graph.getEdges();
  SmallVector<SmallVector<PairCost>> pairs(edges.size());
  auto resultType = [&](int64_t node, unsigned result) {
    const GraphNode &n = nodes[node];
    return n.kind == GraphNode::Op ? n.op->getResult(result).getType()
                                   : n.argument.getType();
  };
  for (auto [index, edge] : llvm::enumerate(edges)) {
    const GraphNode &producer = nodes[edge.producer];
    Type type = resultType(edge.producer, edge.result);
    bool scaled = producer.batchScaled[edge.result];
    for (auto [i, from] : llvm::enumerate(candidates[edge.producer]))
      for (auto [j, to] : llvm::enumerate(candidates[edge.consumer])) {
        double bytes = 0;
        const TensorSharding &wanted = edge.toParameterLayout
                                           ? to.resultLayouts[0]
                                           : to.operandLayouts[edge.operand];
        std::optional<double> time = reshardTime(
            type, scaled, from.resultLayouts[edge.result], wanted, bytes);
        if (!time)
          continue;
        pairs[index].push_back({unsigned(i), unsigned(j), *time, bytes});
      }
  }

  // The ILP, unless every node has one choice.
  SmallVector<int64_t> chosen(nodes.size(), 0);
  bool needsSolver =
      llvm::any_of(candidates, [](auto &list) { return list.size() > 1; });
  if (needsSolver) {
    SmallVector<int64_t> xOffset(nodes.size());
    int64_t columns = 0;
    for (auto [index, list] : llvm::enumerate(candidates)) {
      xOffset[index] = columns;
      columns += list.size();
    }
    SmallVector<int64_t> yOffset(edges.size());
    for (auto [index, list] : llvm::enumerate(pairs)) {
      yOffset[index] = columns;
      columns += list.size();
    }
    std::vector<double> objective(columns, 0), lower(columns, 0),
        upper(columns, 1);
    for (auto [index, list] : llvm::enumerate(candidates))
      for (auto [s, candidate] : llvm::enumerate(list))
        objective[xOffset[index] + s] =
            nodes[index].instances *
            (candidate.time + candidate.communicationTime) * kMicroseconds;
    // Resharding an invariant value reads no micro-batch: the pipeline runs
    // it once per step, and each micro-batch carries its share.
    for (auto [index, list] : llvm::enumerate(pairs)) {
      double share = nodes[edges[index].producer].invariant
                         ? 1.0 / config.microbatchesPerStep
                         : 1.0;
      for (auto [k, pair] : llvm::enumerate(list))
        objective[yOffset[index] + k] =
            edges[index].uses * share * pair.time * kMicroseconds;
    }

    // The constraint matrix as triplets, built in one go.
    std::vector<int> rowIndices, columnIndices;
    std::vector<double> elements, rowLower, rowUpper;
    auto add = [&](int64_t column, double value) {
      rowIndices.push_back(rowLower.size());
      columnIndices.push_back(column);
      elements.push_back(value);
    };
    auto endRow = [&](double value) {
      rowLower.push_back(value);
      rowUpper.push_back(value);
    };
    for (auto [index, list] : llvm::enumerate(candidates)) {
      for (size_t s = 0; s < list.size(); ++s)
        add(xOffset[index] + s, 1.0);
      endRow(1.0);
    }
    // The pairs of an edge that use strategy s of one end sum to x[end][s].
    auto tieEdgeTo = [&](size_t index, int64_t node, bool producerEnd) {
      for (size_t s = 0; s < candidates[node].size(); ++s) {
        add(xOffset[node] + s, -1.0);
        for (auto [k, pair] : llvm::enumerate(pairs[index]))
          if ((producerEnd ? pair.from : pair.to) == s)
            add(yOffset[index] + k, 1.0);
        endRow(0.0);
      }
    };
    for (auto [index, edge] : llvm::enumerate(edges)) {
      tieEdgeTo(index, edge.producer, /*producerEnd=*/true);
      tieEdgeTo(index, edge.consumer, /*producerEnd=*/false);
    }
    CoinPackedMatrix matrix(/*colordered=*/false, rowIndices.data(),
                            columnIndices.data(), elements.data(),
                            elements.size());
    matrix.setDimensions(rowLower.size(), columns);
    OsiClpSolverInterface solver;
    solver.messageHandler()->setLogLevel(0);
    solver.loadProblem(matrix, lower.data(), upper.data(), objective.data(),
                       rowLower.data(), rowUpper.data());
    for (auto [index, list] : llvm::enumerate(candidates))
      for (size_t s = 0; s < list.size(); ++s)
        solver.setInteger(xOffset[index] + s);
    solution.variables = columns;
    // The LP relaxation of this formulation is often integral already (it
    // is exact on trees); branch and bound runs only when it is not.
    // Without Clp's presolve, which took longer than the solve on these
    // LPs (GPT-3 175B's search: 6.5 -> 4.6 s).
    solver.setHintParam(OsiDoPresolveInInitial, false, OsiHintDo);
    solver.initialSolve();
    if (!solver.isProvenOptimal()) {
      solution.feasible = false;
      return;
    }
    const double *values = solver.getColSolution();
    bool integral = true;
    for (auto [index, list] : llvm::enumerate(candidates))
      for (size_t s = 0; s < list.size(); ++s) {
        double value = values[xOffset[index] + s];
        integral &= value < 1e-6 || value > 1 - 1e-6;
      }
    double objectiveValue = solver.getObjValue();
    std::optional<CbcModel> model;
    if (!integral) {
      model.emplace(solver);
      model->setLogLevel(0);
      model->messageHandler()->setLogLevel(0);
      model->branchAndBound();
      values = model->bestSolution();
      if (!values || !model->isProvenOptimal()) {
        solution.feasible = false;
        return;
      }
      objectiveValue = model->getObjValue();
    }
    solution.objective = objectiveValue / kMicroseconds;
    for (auto [index, list] : llvm::enumerate(candidates))
      for (size_t s = 0; s < list.size(); ++s)
        if (values[xOffset[index] + s] > 0.5)
          chosen[index] = s;
  }

  // What the choice costs, per segment instance.
  llvm::DenseSet<int64_t> readsParameters;
  for (const GraphEdge &edge : edges)
    if (nodes[edge.producer].kind == GraphNode::Param)
      readsParameters.insert(edge.consumer);
  for (auto [index, node] : llvm::enumerate(nodes)) {
    const Candidate &candidate = candidates[index][chosen[index]];
    solution.layouts.push_back(candidate.resultLayouts);
    solution.operandLayouts.push_back(candidate.operandLayouts);
    solution.splitFactors.push_back(candidate.factor);
    SegmentCost &segment = solution.segments[node.segment];
    if (node.kind == GraphNode::Param) {
      auto type = cast<RankedTensorType>(node.argument.getType());
      double elements =
          candidate.resultLayouts[0].getLocalType(type, mesh).getNumElements();
      segment.parameters += elements;
      solution.largestParameter = std::max(solution.largestParameter, elements);
      continue;
    }
    if (node.kind != GraphNode::Op)
      continue;
    segment.communicationTime += candidate.communicationTime;
    segment.communicationBytes += candidate.communicationBytes;
    addRecomputed(segment, node,
                  {candidate.communicationTime, candidate.communicationBytes});
    if (candidate.factor >= 0 && node.tokenFactors[candidate.factor])
      solution.usesSequenceParallel = true;
    if (candidate.factor >= 0 && totalFlops > 0)
      solution.splitFlopShare +=
          candidate.flops * config.tp * node.instances / totalFlops;
    if (node.backward) {
      segment.backwardTime += candidate.time;
      continue;
    }
    segment.forwardTime += candidate.time;
    segment.forwardFlops += candidate.flops;
    bool parameterized = readsParameters.contains(index);
    if (!parameterized)
      segment.parameterFreeForwardTime += candidate.time;
    for (auto [i, result] : llvm::enumerate(node.op->getResults())) {
      double bytes = localBytes(result.getType(), candidate.resultLayouts[i],
                                node.batchScaled[i]);
      if (node.savedForBackward[i])
        segment.activationBytes += bytes;
      if (node.keptSelective[i])
        segment.selectiveActivationBytes += bytes;
      if (node.keptFull[i])
        segment.fullActivationBytes += bytes;
    }
  }
  std::set<std::pair<int64_t, int>> shared;
  // The tensors deferred weight-gradient ops read, and of those the ones
  // only tied parameters' have read so far (with the segment counting them).
  std::set<std::pair<int64_t, unsigned>> deferred;
  std::map<std::pair<int64_t, unsigned>, SegmentCost *> tiedOnly;
  std::vector<double> copyBytes(nodes.size(), 0),
      gatheredCopyBytes(nodes.size(), 0);
  for (auto [index, edge] : llvm::enumerate(edges)) {
    const GraphNode &producer = nodes[edge.producer];
    const GraphNode &reader = nodes[edge.consumer];
    if (producer.kind == GraphNode::Param) {
      auto type = cast<RankedTensorType>(producer.argument.getType());
      double elements = solution.layouts[edge.producer][0]
                            .getLocalType(type, mesh)
                            .getNumElements();
      SegmentCost &segment = solution.segments[reader.segment];
      double reads = elements * edge.uses / reader.instances;
      segment.parameterReads += reads;
      addRecomputed(segment, reader, {0, 0, reads});
      if (producer.segment.kind != reader.segment.kind &&
          shared.insert({edge.producer, int(reader.segment.kind)}).second)
        segment.sharedParameters += elements;
    }
    // ZB-H1 holds what a deferred weight-gradient op reads, but for what
    // such ops make themselves, which exists only while they run.
    if (reader.weightGradient && producer.kind == GraphNode::Op &&
        !producer.invariant && !producer.weightGradient) {
      std::pair<int64_t, unsigned> tensor{edge.producer, edge.result};
      double bytes = localBytes(resultType(edge.producer, edge.result),
                                solution.layouts[edge.producer][edge.result],
                                producer.batchScaled[edge.result]);
      SegmentCost &segment = solution.segments[reader.segment];
      if (deferred.insert(tensor).second) {
        segment.deferredBytes += bytes;
        if (reader.tiedGradient) {
          segment.tiedDeferredBytes += bytes;
          tiedOnly[tensor] = &segment;
        }
      } else if (auto it = tiedOnly.find(tensor);
                 !reader.tiedGradient && it != tiedOnly.end()) {
        it->second->tiedDeferredBytes -= bytes;
        tiedOnly.erase(it);
      }
    }
    int64_t s1 = chosen[edge.producer], s2 = chosen[edge.consumer];
    if (!edge.toParameterLayout) {
      const TensorSharding &from =
          candidates[edge.producer][s1].resultLayouts[edge.result];
      const TensorSharding &wanted =
          candidates[edge.consumer][s2].operandLayouts[edge.operand];
      if (from.dropsSplitFor(wanted)) {
        double bytes = localBytes(resultType(edge.producer, edge.result),
                                  wanted, producer.batchScaled[edge.result]);
        // With several micro-batches an invariant value's copy is held
        // through the step (the search adds it where the plan has several),
        // not made for its reader; under ZeRO-3 it is again its reader's.
        if (producer.invariant)
          solution.segments[reader.segment].parameterCopyBytes +=
              bytes * edge.uses / reader.instances;
        if (producer.invariant && config.microbatchesPerStep > 1)
          gatheredCopyBytes[edge.consumer] += bytes;
        else
          copyBytes[edge.consumer] += bytes;
      }
    }
    for (const PairCost &pair : pairs[index])
      if (pair.from == s1 && pair.to == s2) {
        const GraphNode &consumer = nodes[edge.consumer];
        SegmentCost &segment = solution.segments[consumer.segment];
        double share = double(edge.uses) / consumer.instances;
        SegmentCost::Recomputed done{share * pair.time, share * pair.bytes};
        if (producer.invariant) {
          std::swap(done.communicationTime, done.stepCommunicationTime);
          std::swap(done.communicationBytes, done.stepCommunicationBytes);
        }
        segment.communicationTime += done.communicationTime;
        segment.communicationBytes += done.communicationBytes;
        segment.stepCommunicationTime += done.stepCommunicationTime;
        segment.stepCommunicationBytes += done.stepCommunicationBytes;
        addRecomputed(segment, consumer, done);
      }
  }
  measurePeaks(
      graph, solution,
      [&](int64_t node, unsigned result) {
        return localBytes(resultType(node, result),
                          solution.layouts[node][result],
                          nodes[node].batchScaled[result]);
      },
      copyBytes, gatheredCopyBytes);
  for (auto &[segment, cost] : solution.segments) {
    if (segment.kind != Segment::Layer)
      continue;
    int64_t output = graph.getLayerOutputNode(segment.layerClass);
    const GraphNode &node = nodes[output];
    cost.outputBytes = localBytes(node.op->getResult(0).getType(),
                                  solution.layouts[output][0],
                                  node.batchScaled[0]);
  }
}
