//===- Report.cpp - what parc-plan writes ---------------------------------===//

#include "parc/Plan/Report.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Transforms/Pipeline.h"
#include "parc/Transforms/ShardingAnnotations.h"

#include "llvm/Support/FormatVariadic.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace mlir::parc;
using Json = nlohmann::ordered_json;

static std::string gib(double bytes) { return formatBytes(bytes); }

static std::string seconds(double time) {
  if (time >= 1)
    return llvm::formatv("{0:f3} s", time).str();
  if (time >= 1e-3)
    return llvm::formatv("{0:f3} ms", time * 1e3).str();
  return llvm::formatv("{0:f1} us", time * 1e6).str();
}

static std::vector<std::vector<std::string>>
toAxisNames(const TensorSharding &layout) {
  std::vector<std::vector<std::string>> dims;
  for (const AxisList &axes : layout.dims) {
    dims.emplace_back();
    for (StringAttr axis : axes)
      dims.back().push_back(axis.getValue().str());
  }
  return dims;
}

/// The nodes whose tp factor arrives split through some operand: the
/// producer's layout splits a dimension the factor spans. Propagation finds
/// such a split from the values around the op; one that starts at the op
/// it would not.
static llvm::DenseSet<int64_t>
getNodesWithArrivingSplit(const ModelGraph &graph,
                          const StrategySolution &strategy) {
  llvm::DenseSet<int64_t> carried;
  for (const GraphEdge &edge : graph.getEdges()) {
    int64_t factor = strategy.splitFactors[edge.consumer];
    // Arguments' nodes split nothing (-1), which leaves op consumers.
    if (factor < 0)
      continue;
    const ShardingRule &rule = graph.getNodes()[edge.consumer].rule;
    const TensorSharding &arriving =
        strategy.layouts[edge.producer][edge.result];
    for (auto [dim, factors] :
         llvm::enumerate(rule.getOperands()[edge.operand]))
      if (llvm::is_contained(factors, factor) && !arriving.dims[dim].empty())
        carried.insert(edge.consumer);
  }
  return carried;
}

/// Whether `plan` splits the batch over dp; local SGD's replicas each take a
/// whole step of their own batch instead.
static bool splitsBatchOverDp(const EvaluatedPlan &plan) {
  return plan.dp > 1 && plan.sync != DataParallelSync::LocalSgd;
}

/// Whether a tensor with factors `dims` of `node`'s rule has a dimension
/// that spans the batch.
static bool spansBatch(const GraphNode &node, const TensorFactors &dims) {
  return llvm::any_of(dims, [&](const DimFactors &factors) {
    return llvm::any_of(
        factors, [&](int64_t factor) { return node.batchFactors[factor]; });
  });
}

/// Whether `node` sums over the batch: its result (a weight's gradient)
/// has no batch dimension though the op reads batch factors.
static bool sumsOverBatch(const GraphNode &node) {
  return !spansBatch(node, node.rule.getResults()[0]) &&
         llvm::is_contained(node.batchFactors, true);
}

/// Adds dp in front of the other axes of the first dimension of a tensor
/// with factors `dims` of `node`'s rule that spans the batch (dp splits only
/// the batch).
static void addDataParallelAxis(TensorSharding &layout, const GraphNode &node,
                                const TensorFactors &dims,
                                MLIRContext *context) {
  for (auto [dim, factors] : llvm::enumerate(dims))
    if (llvm::any_of(factors,
                     [&](int64_t factor) { return node.batchFactors[factor]; })) {
      layout.dims[dim].insert(layout.dims[dim].begin(),
                              StringAttr::get(context, "dp"));
      return;
    }
}

Plan mlir::parc::buildPlan(const EvaluatedPlan &chosen,
                           const ModelGraph &graph,
                           const ReportContext &context) {
  const SearchOptions &options = *context.options;
  Plan plan;
  // Micro-batches run as a pipeline, of one stage without pp.
  bool pipelined = chosen.pp > 1 || chosen.microbatches > 1;
  for (auto [name, size] : {std::pair<const char *, int64_t>{"pp", chosen.pp},
                            {"dp", chosen.dp},
                            {"tp", chosen.tp}})
    if (size > 1 || (pipelined && StringRef(name) == "pp"))
      plan.mesh.push_back({name, size, {}});
  if (plan.mesh.empty())
    plan.mesh.push_back({"dp", 1, {}});

  func::FuncOp func = graph.getFunction();
  const StrategySolution &strategy = *chosen.strategy;
  for (unsigned index = 0; index < func.getNumArguments(); ++index) {
    auto name = func.getArgAttrOfType<StringAttr>(index,
                                                  ParcDialect::kNameAttrName);
    auto role = func.getArgAttrOfType<StringAttr>(index,
                                                  ParcDialect::kRoleAttrName);
    std::optional<int64_t> node = graph.getArgumentNode(index);
    if (!name || !role || !node)
      continue;
    TensorSharding layout = strategy.layouts[*node][0];
    if (role.getValue() != "param") {
      if (splitsBatchOverDp(chosen) && !layout.dims.empty())
        layout.dims[0].insert(layout.dims[0].begin(),
                              StringAttr::get(func.getContext(), "dp"));
    }
    // Every parameter is pinned, replicated ones too, so that propagation
    // cannot choose otherwise than the ILP did.
    if (role.getValue() == "param" || !layout.isReplicated())
      plan.shardings.push_back(
          {name.getValue().str(), toAxisNames(layout), {}});
  }
  // Named values pin the activations' layouts the same way (sequence
  // parallelism's split residual stream, a replicated one without it); an
  // unnamed op is pinned by position ("@N") where the ILP split its token
  // dimensions or where its split starts (an LM head split over the
  // vocabulary with its weight whole), since propagation would not find
  // those splits from the others.
  llvm::DenseSet<int64_t> arrivingSplit =
      getNodesWithArrivingSplit(graph, strategy);
  for (Operation *op : getPlanPositionedOps(func)) {
    if (op->getNumResults() == 0)
      continue;
    int64_t node = graph.getOpNode(op);
    auto name = op->getAttrOfType<StringAttr>(ParcDialect::kNameAttrName);
    int64_t factor = strategy.splitFactors[node];
    bool splitsTokens =
        factor >= 0 && graph.getNodes()[node].tokenFactors[factor];
    bool startsSplit = factor >= 0 && !arrivingSplit.contains(node);
    if (!name && !splitsTokens && !startsSplit)
      continue;
    TensorSharding layout = strategy.layouts[node][0];
    layout.partial.clear();
    if (!name && layout.isReplicated())
      continue;
    if (splitsBatchOverDp(chosen))
      addDataParallelAxis(layout, graph.getNodes()[node],
                          graph.getNodes()[node].rule.getResults()[0],
                          func.getContext());
    plan.shardings.push_back(
        {name ? name.getValue().str()
              : "@" + std::to_string(graph.getPlanPosition(op)),
         toAxisNames(layout),
         {}});
  }
  // An operand that the ILP gathers (or moves) for a reader at the end of
  // the forward pass, or a parameter it gathers for a reader, is pinned at
  // that use ("@N:K"): the producer keeps its layout, this reader alone
  // takes the value as the ILP chose, as an LM head split over the
  // vocabulary whose logits are gathered for a replicated loss, or a token
  // embedding split for its optimizer state and gathered for the lookup.
  // Other activations are not pinned by use: propagation lays the backward
  // ops out from the forward values they read, and such a pin would move
  // them off the ILP's choice.
  DenseMap<int64_t, SmallVector<const GraphEdge *>> edgesInto;
  llvm::DenseSet<int64_t> feedsForward;
  for (const GraphEdge &edge : graph.getEdges()) {
    if (!edge.toParameterLayout)
      edgesInto[edge.consumer].push_back(&edge);
    const GraphNode &consumer = graph.getNodes()[edge.consumer];
    if (consumer.kind == GraphNode::Op && !consumer.backward)
      feedsForward.insert(edge.producer);
  }
  for (const LiveOp &live : graph.getLiveOps()) {
    if (live.planPosition < 0)
      continue;
    int64_t node = live.node;
    bool endsForward = !live.backward && !feedsForward.contains(node);
    for (const GraphEdge *edge : edgesInto.lookup(node)) {
      if (!endsForward && !graph.getNodes()[edge->producer].invariant)
        continue;
      TensorSharding wanted = strategy.operandLayouts[node][edge->operand];
      // Propagation would carry such a split on into the reader instead.
      if (!strategy.layouts[edge->producer][edge->result].dropsSplitFor(wanted))
        continue;
      wanted.partial.clear();
      const GraphNode &consumer = graph.getNodes()[node];
      if (splitsBatchOverDp(chosen))
        addDataParallelAxis(wanted, consumer,
                            consumer.rule.getOperands()[edge->operand],
                            func.getContext());
      plan.shardings.push_back({"@" + std::to_string(live.planPosition) + ":" +
                                    std::to_string(edge->operand),
                                toAxisNames(wanted),
                                {}});
    }
  }
  llvm::append_range(plan.shardings, chosen.layoutPins);

  if (chosen.sequenceParallel)
    plan.sequenceParallel = true;
  if (pipelined) {
    PipelinePlan pipeline;
    pipeline.axis = "pp";
    pipeline.microbatches = chosen.microbatches;
    pipeline.schedule = chosen.schedule;
    // Interleaved chunks split the layers evenly, as the cost model does.
    if (chosen.virtualStages > 1)
      pipeline.virtualStages = chosen.virtualStages;
    else
      pipeline.layersPerStage = chosen.layersPerStage;
    plan.pipeline = pipeline;
  }
  plan.zero = chosen.zero;
  if (chosen.sync != DataParallelSync::AllReduce) {
    DataParallelPlan dataParallel;
    dataParallel.sync = chosen.sync;
    if (chosen.sync == DataParallelSync::ParameterServer) {
      dataParallel.servers = chosen.servers;
      dataParallel.placement = chosen.placement;
    } else {
      dataParallel.syncEvery = chosen.syncEvery;
    }
    plan.dataParallel = dataParallel;
  }
  plan.recompute = chosen.recompute;
  plan.precision =
      options.dtype == "bf16" ? Precision::BF16Mixed : Precision::F32;
  plan.batch = BatchPlan{options.globalBatch, chosen.microBatch};

  Prediction predicted;
  predicted.stepTimeS = chosen.stepTime;
  predicted.tflopsPerGpu = chosen.tflopsPerGpu;
  predicted.mfu = chosen.mfu;
  predicted.peakMemoryBytesPerRank = chosen.memory.total();
  predicted.commBytesPerRank = chosen.commBytesPerRank;
  predicted.bubbleFraction = chosen.bubbleFraction;
  predicted.memory = MemoryPrediction{
      chosen.memory.parameters, chosen.memory.gradients,
      chosen.memory.optimizerState, chosen.memory.activations,
      chosen.memory.temporaries};
  plan.predicted = predicted;

  PlannerInfo info;
  info.cluster = context.cluster;
  info.gpus = options.gpus;
  info.buildable = chosen.buildable;
  info.notes.push_back(chosen.describe());
  if (!chosen.buildable)
    info.notes.push_back("parc-compile does not build " + chosen.notBuildable +
                         " yet");
  plan.planner = info;
  return plan;
}

/// `layout` without the micro-batch axis, which --parc-apply-plan adds to a
/// pin's batch dimension itself and the ILP's layouts leave out.
static TensorSharding withoutMicrobatches(TensorSharding layout) {
  for (AxisList &axes : layout.dims)
    llvm::erase_if(axes, [](StringAttr axis) {
      return axis.getValue() == kMicrobatchAxis;
    });
  return layout;
}

std::vector<NamedSharding>
mlir::parc::findLayoutPins(func::FuncOp step, const EvaluatedPlan &plan,
                           const ModelGraph &graph) {
  std::vector<NamedSharding> pins;
  SmallVector<Operation *> positioned = getPlanPositionedOps(step);
  // A pin of an op lays its recomputed copies out as it too.
  llvm::DenseMap<int64_t, SmallVector<Operation *>> copiesOf =
      getRecomputedCopies(step);
  for (const LiveOp &live : graph.getLiveOps()) {
    const GraphNode &node = graph.getNodes()[live.node];
    if (live.planPosition < 0)
      continue;
    // The step's op at this position must be the training graph's.
    Operation *op = live.planPosition < int64_t(positioned.size())
                        ? positioned[live.planPosition]
                        : nullptr;
    if (!op || op->getName() != node.op->getName() ||
        op->getNumResults() != node.op->getNumResults())
      return {};
    if (op->getNumResults() == 0)
      continue;
    TensorSharding wanted = plan.strategy->layouts[live.node][0];
    // A pin is whole: it would reduce a pending sum where it stands, over
    // tp or, where the op sums over the batch (a weight's gradient), dp.
    if (!wanted.partial.empty())
      continue;
    if (splitsBatchOverDp(plan)) {
      if (sumsOverBatch(node))
        continue;
      addDataParallelAxis(wanted, node, node.rule.getResults()[0],
                          step.getContext());
    }
    std::vector<std::vector<std::string>> dims = toAxisNames(wanted);
    SmallVector<Operation *> laidOut = {op};
    llvm::append_range(laidOut, copiesOf.lookup(live.planPosition));
    SmallVector<std::optional<TensorSharding>> found =
        llvm::map_to_vector(laidOut, [](Operation *each) {
          return getRecordedSharding(each->getResult(0));
        });
    bool whole = llvm::all_of(found, [](const auto &layout) {
      return layout && layout->partial.empty();
    });
    if (!whole || llvm::all_of(found, [&](const auto &layout) {
          return toAxisNames(withoutMicrobatches(*layout)) == dims;
        }))
      continue;
    pins.push_back({"@" + std::to_string(live.planPosition), dims, {}});
    // Propagation lays a weight's gradient out from the operands it
    // contracts: from whole ones it is whole, however it is pinned, and the
    // micro-batches accumulate it whole. Where the ILP computes it split
    // from slices of them, they are pinned at this use too (a local slice).
    if (!sumsOverBatch(node))
      continue;
    ArrayRef<TensorSharding> wantedOperands =
        plan.strategy->operandLayouts[live.node];
    unsigned operands =
        std::min<unsigned>(wantedOperands.size(), op->getNumOperands());
    for (unsigned operand = 0; operand < operands; ++operand) {
      const TensorSharding &wantedOperand = wantedOperands[operand];
      std::optional<TensorSharding> foundOperand =
          getRecordedSharding(op->getOperand(operand));
      if (!wantedOperand.partial.empty() || !foundOperand ||
          !foundOperand->partial.empty())
        continue;
      TensorSharding compiled = withoutMicrobatches(*foundOperand);
      if (compiled.dims != wantedOperand.dims &&
          !compiled.dropsSplitFor(wantedOperand))
        pins.push_back({"@" + std::to_string(live.planPosition) + ":" +
                            std::to_string(operand),
                        toAxisNames(wantedOperand),
                        {}});
    }
  }
  return pins;
}

static void printPlanDetails(llvm::raw_ostream &os, const EvaluatedPlan &plan,
                             bool markdown) {
  const char *bullet = markdown ? "- " : "  ";
  os << bullet << "step time " << seconds(plan.stepTime) << ", "
     << llvm::formatv("{0:f1}", plan.tflopsPerGpu) << " TFLOP/s per GPU, MFU "
     << llvm::formatv("{0:f3}", plan.mfu) << ", peak memory "
     << gib(plan.memory.total()) << " per rank (stage " << plan.peakStage
     << ")\n";
  if (plan.compiledArenaBytes)
    os << bullet << "compiled train step's memory plan: "
       << gib(*plan.compiledArenaBytes) << " per rank (prediction / compiled "
       << llvm::formatv("{0:f3}", plan.memory.total() / *plan.compiledArenaBytes)
       << ")\n";
  const TimeBreakdown &t = plan.time;
  os << bullet << "time: compute " << seconds(t.compute) << ", recompute "
     << seconds(t.recompute) << ", tensor-parallel comm "
     << seconds(t.tensorParallelComm) << ", pipeline comm "
     << seconds(t.pipelineComm) << ", data-parallel comm (exposed) "
     << seconds(t.dataParallelComm) << ", bubble " << seconds(t.bubble)
     << ", optimizer " << seconds(t.optimizer) << "\n";
  const MemoryBreakdown &m = plan.memory;
  os << bullet << "memory per rank: parameters " << gib(m.parameters)
     << ", gradients " << gib(m.gradients) << ", optimizer state "
     << gib(m.optimizerState) << ", activations " << gib(m.activations)
     << ", temporaries " << gib(m.temporaries);
  os << "\n";
  if (plan.pp > 1) {
    os << bullet << "layers per stage:";
    for (int64_t layers : plan.layersPerStage)
      os << " " << layers;
    os << "; " << plan.microbatches << " micro-batches, bubble "
       << llvm::formatv("{0:f1}%", 100 * plan.bubbleFraction) << "\n";
  } else if (plan.microbatches > 1) {
    os << bullet << plan.microbatches
       << " micro-batches of gradient accumulation\n";
  }
  os << bullet << "communication per rank and step: "
     << gib(plan.commBytesPerRank) << "\n";
  if (plan.sync == DataParallelSync::ParameterServer)
    os << bullet << "data-parallel sync: parameter server, "
       << getServerPlacementName(plan.placement) << ", " << plan.servers
       << " servers: a worker sends " << gib(plan.workerSyncBytes)
       << " per step, the busiest rank " << gib(plan.busiestSyncBytes)
       << " (a ring all-reduce: " << gib(plan.ringSyncBytes) << " per rank)\n";
  // Dedicated servers are processes beside the devices the plan fills (a
  // data-parallel group of every tensor-parallel and pipeline coordinate
  // has its own).
  if (plan.sync == DataParallelSync::ParameterServer &&
      plan.placement == ServerPlacement::Dedicated)
    os << bullet << "dedicated servers: " << plan.servers * plan.tp * plan.pp
       << " ranks of their own beside the " << plan.dp * plan.tp * plan.pp
       << " workers (" << plan.servers
       << " per data-parallel group), not counted among the devices\n";
  if (plan.sync == DataParallelSync::LocalSgd)
    os << bullet << "data-parallel sync: local SGD, the replicas averaged "
       << "every " << plan.syncEvery << " steps: " << gib(plan.workerSyncBytes)
       << " per rank and step (a ring all-reduce of the gradients: "
       << gib(plan.ringSyncBytes)
       << "); between averagings each replica steps on its own batch, which "
          "trains otherwise than synchronous SGD\n";
  os << bullet << "parc-compile builds it: "
     << (plan.buildable ? std::string("yes")
                        : "not yet (" + plan.notBuildable + ")")
     << "\n";
}

/// The synchronization as the alternatives table names it.
static std::string describeSync(const EvaluatedPlan &plan) {
  switch (plan.sync) {
  case DataParallelSync::AllReduce:
    return "allreduce";
  case DataParallelSync::ParameterServer:
    return llvm::formatv("ps {0} x{1}", getServerPlacementName(plan.placement),
                         plan.servers);
  case DataParallelSync::LocalSgd:
    return "local-sgd /" + std::to_string(plan.syncEvery);
  }
  return "";
}

static std::string tableRow(const EvaluatedPlan &plan, size_t rank,
                            bool withSync) {
  return llvm::formatv(
             "| {0} | {1} | {2} | {3} | {4} | {5} | {6} | {7} | {8} | {9} | "
             "{10:f1} | "
             "{11:f3} | {12} | {13} | {14:f1}% |",
             rank, plan.dp, plan.tp, plan.pp, plan.microBatch, plan.zero,
             getRecomputeName(plan.recompute),
             plan.sequenceParallel ? "on" : "off",
             plan.schedule
                 ? getPipelineScheduleName(*plan.schedule).str() +
                       (plan.virtualStages > 1
                            ? " v=" + std::to_string(plan.virtualStages)
                            : "")
                 : std::string("-"),
             seconds(plan.stepTime), plan.tflopsPerGpu, plan.mfu,
             gib(plan.memory.total()),
             seconds(plan.time.tensorParallelComm + plan.time.pipelineComm +
                     plan.time.dataParallelComm),
             100 * plan.bubbleFraction)
             .str() +
         (withSync ? " " + describeSync(plan) + " |" : "");
}

/// What the chosen plan does differently from `baseline`, term by term.
static void explainAgainst(llvm::raw_ostream &os, const EvaluatedPlan &chosen,
                           const EvaluatedPlan &baseline) {
  os << "compared with " << baseline.describe() << ":\n";
  os << llvm::formatv("  {0:f3}x the step time ({1} vs {2}), {3:f1} vs {4:f1} "
                      "TFLOP/s per GPU, {5} vs {6} peak memory\n",
                      chosen.stepTime / baseline.stepTime,
                      seconds(chosen.stepTime), seconds(baseline.stepTime),
                      chosen.tflopsPerGpu, baseline.tflopsPerGpu,
                      gib(chosen.memory.total()),
                      gib(baseline.memory.total()));
  std::pair<const char *, std::pair<double, double>> terms[] = {
      {"compute", {chosen.time.compute, baseline.time.compute}},
      {"recompute", {chosen.time.recompute, baseline.time.recompute}},
      {"tensor-parallel comm",
       {chosen.time.tensorParallelComm, baseline.time.tensorParallelComm}},
      {"pipeline comm",
       {chosen.time.pipelineComm, baseline.time.pipelineComm}},
      {"data-parallel comm",
       {chosen.time.dataParallelComm, baseline.time.dataParallelComm}},
      {"bubble", {chosen.time.bubble, baseline.time.bubble}},
      {"optimizer", {chosen.time.optimizer, baseline.time.optimizer}}};
  for (auto &[name, values] : terms) {
    double change = values.first - values.second;
    if (std::abs(change) > 1e-3 * baseline.stepTime)
      os << "  " << name << ": " << seconds(values.second) << " -> "
         << seconds(values.first) << "\n";
  }
}

void mlir::parc::printReport(llvm::raw_ostream &os, const SearchResult &result,
                             const ModelGraph &graph,
                             const ReportContext &context, bool markdown,
                             const EvaluatedPlan *baseline) {
  const SearchOptions &options = *context.options;
  if (markdown)
    os << "# parc-plan report\n\n";
  os << "model " << context.model << ": " << graph.getNumLayers()
     << " layers, " << graph.getParameterCount() << " parameters; "
     << options.gpus << " GPUs of " << context.cluster << ", global batch "
     << options.globalBatch << ", " << options.dtype << "\n";
  os << "searched " << result.evaluated << " configurations ("
     << result.ilpSolves << " strategy ILP solves) in "
     << llvm::formatv("{0:f2}", context.searchSeconds) << " s; "
     << result.plans.size() << " fit in memory, " << result.rejected.size()
     << " rejected\n\n";
  auto printRejected = [&] {
    if (result.rejected.empty())
      return;
    os << (markdown ? "\n## Rejected\n\n" : "\nrejected (first 20):\n");
    for (size_t i = 0; i < result.rejected.size() && i < 20; ++i)
      os << (markdown ? "- " : "  ") << result.rejected[i].configuration
         << ": " << result.rejected[i].reason << "\n";
  };
  if (result.plans.empty())
    return printRejected();
  const EvaluatedPlan &chosen = result.plans.front();
  os << (markdown ? "## Fastest plan\n\n" : "fastest plan: ")
     << chosen.describe() << "\n";
  if (markdown)
    os << "\n";
  printPlanDetails(os, chosen, markdown);
  const EvaluatedPlan *buildable = result.getFastestBuildable();
  if (buildable && buildable != &chosen) {
    os << (markdown ? "\n## Fastest plan parc-compile builds today\n\n"
                    : "\nfastest plan parc-compile builds today: ")
       << buildable->describe() << "\n";
    if (markdown)
      os << "\n";
    printPlanDetails(os, *buildable, markdown);
  } else if (!buildable) {
    os << (markdown ? "\n" : "")
       << "no plan that fits is one parc-compile builds today\n";
  }
  if (baseline) {
    os << "\n";
    explainAgainst(os, chosen, *baseline);
  }
  os << (markdown ? "\n## Alternatives\n\n" : "\nalternatives:\n");
  size_t listed =
      std::min(result.plans.size(), static_cast<size_t>(context.top + 1));
  // A sync column only where a listed plan does not all-reduce.
  bool withSync =
      llvm::any_of(ArrayRef<EvaluatedPlan>(result.plans).take_front(listed),
                   [](const EvaluatedPlan &plan) {
                     return plan.sync != DataParallelSync::AllReduce;
                   });
  os << "| # | dp | tp | pp | mb | zero | recompute | sp | schedule | step "
        "time | TFLOP/s/GPU | MFU | peak memory/rank | exposed comm | bubble "
        "|"
     << (withSync ? " sync |" : "") << "\n";
  os << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
     << (withSync ? "---|" : "") << "\n";
  for (size_t i = 0; i < listed; ++i)
    os << tableRow(result.plans[i], i + 1, withSync) << "\n";
  printRejected();
}

static Json planJson(const EvaluatedPlan &plan) {
  Json entry;
  entry["configuration"] = plan.describe();
  entry["dp"] = plan.dp;
  entry["tp"] = plan.tp;
  entry["pp"] = plan.pp;
  entry["micro_batch"] = plan.microBatch;
  entry["zero"] = plan.zero;
  entry["recompute"] = getRecomputeName(plan.recompute).str();
  entry["sequence_parallel"] = plan.sequenceParallel;
  entry["schedule"] =
      plan.schedule ? getPipelineScheduleName(*plan.schedule).str() : "none";
  entry["virtual_stages"] = plan.virtualStages;
  entry["sync"] = getDataParallelSyncName(plan.sync).str();
  if (plan.sync == DataParallelSync::ParameterServer) {
    entry["servers"] = plan.servers;
    entry["placement"] = getServerPlacementName(plan.placement).str();
  }
  if (plan.sync == DataParallelSync::LocalSgd)
    entry["sync_every"] = plan.syncEvery;
  entry["sync_bytes_per_rank"] = {{"worker", plan.workerSyncBytes},
                                  {"busiest", plan.busiestSyncBytes},
                                  {"ring_allreduce", plan.ringSyncBytes}};
  entry["step_time_s"] = plan.stepTime;
  entry["tflops_per_gpu"] = plan.tflopsPerGpu;
  entry["mfu"] = plan.mfu;
  entry["peak_memory_bytes_per_rank"] = plan.memory.total();
  entry["comm_bytes_per_rank"] = plan.commBytesPerRank;
  entry["bubble_fraction"] = plan.bubbleFraction;
  entry["buildable"] = plan.buildable;
  if (plan.compiledArenaBytes)
    entry["compiled_arena_bytes_per_rank"] = *plan.compiledArenaBytes;
  return entry;
}

std::string mlir::parc::writeJsonSummary(const SearchResult &result,
                                         const ModelGraph &graph,
                                         const ReportContext &context) {
  Json summary;
  if (!result.plans.empty()) {
    const EvaluatedPlan *buildable = result.getFastestBuildable();
    const EvaluatedPlan &chosen = buildable ? *buildable : result.plans.front();
    summary["predicted"] = {
        {"step_time_s", chosen.stepTime},
        {"tflops_per_gpu", chosen.tflopsPerGpu},
        {"mfu", chosen.mfu},
        {"peak_memory_bytes_per_rank", chosen.memory.total()},
        {"comm_bytes_per_rank", chosen.commBytesPerRank},
        {"bubble_fraction", chosen.bubbleFraction}};
    summary["plan"] =
        Json::parse(writePlan(buildPlan(chosen, graph, context)));
  }
  Json alternatives = Json::array();
  for (size_t i = 1; i < result.plans.size() &&
                     i <= static_cast<size_t>(context.top);
       ++i)
    alternatives.push_back(planJson(result.plans[i]));
  summary["alternatives"] = alternatives;
  Json rejected = Json::array();
  for (const RejectedPlan &plan : result.rejected)
    rejected.push_back(
        {{"configuration", plan.configuration}, {"reason", plan.reason}});
  summary["rejected"] = rejected;
  summary["search"] = {{"evaluated", result.evaluated},
                       {"ilp_solves", result.ilpSolves},
                       {"seconds", context.searchSeconds}};
  return summary.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string mlir::parc::writeMegatronArguments(const EvaluatedPlan &plan,
                                               const SearchOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "--tensor-model-parallel-size " << plan.tp << "\n";
  os << "--pipeline-model-parallel-size " << plan.pp << "\n";
  if (plan.virtualStages > 1)
    os << "--num-layers-per-virtual-pipeline-stage "
       << plan.layersPerStage.front() / plan.virtualStages << "\n";
  if (plan.sequenceParallel)
    os << "--sequence-parallel\n";
  os << "--micro-batch-size " << plan.microBatch << "\n";
  os << "--global-batch-size " << options.globalBatch << "\n";
  if (plan.recompute != Recompute::None) {
    os << "--recompute-granularity " << getRecomputeName(plan.recompute)
       << "\n";
    if (plan.recompute == Recompute::Full)
      os << "--recompute-method uniform\n--recompute-num-layers 1\n";
  }
  if (plan.zero >= 1)
    os << "--use-distributed-optimizer\n";
  if (options.dtype == "bf16")
    os << "--bf16\n";
  if (options.overlapGradientReduction)
    os << "--overlap-grad-reduce\n";
  return text;
}

std::string mlir::parc::writeDeepSpeedConfig(const EvaluatedPlan &plan,
                                             const SearchOptions &options) {
  Json config;
  config["train_batch_size"] = options.globalBatch;
  config["train_micro_batch_size_per_gpu"] = plan.microBatch;
  config["gradient_accumulation_steps"] = plan.microbatches;
  config["zero_optimization"] = {{"stage", plan.zero}};
  config["bf16"] = {{"enabled", options.dtype == "bf16"}};
  if (plan.recompute != Recompute::None)
    config["activation_checkpointing"] = {
        {"partition_activations", plan.sequenceParallel},
        {"contiguous_memory_optimization", false},
        {"number_checkpoints", nullptr}};
  if (plan.pp > 1)
    config["pipeline"] = {{"stages", plan.pp},
                          {"partition_method", "parameters"}};
  config["tensor_parallel"] = {{"autotp_size", plan.tp}};
  return config.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string mlir::parc::writeScheduleTrace(const EvaluatedPlan &plan) {
  // Simulates the schedule: forward (1/3 of a micro-batch's time) and
  // backward (2/3) per stage and micro-batch, each waiting for its
  // neighbour stage and the point-to-point send.
  int64_t p = plan.pp, m = plan.microbatches;
  struct Task {
    bool forward;
    int64_t microbatch;
  };
  std::vector<std::vector<Task>> order(p);
  for (int64_t s = 0; s < p; ++s) {
    bool gpipe = plan.schedule == PipelineSchedule::GPipe;
    int64_t warmup = gpipe ? m : std::min<int64_t>(p - s - 1, m);
    int64_t nextForward = 0, nextBackward = 0;
    for (; nextForward < warmup; ++nextForward)
      order[s].push_back({true, nextForward});
    while (nextBackward < m) {
      if (nextForward < m)
        order[s].push_back({true, nextForward++});
      order[s].push_back({false, nextBackward++});
    }
  }
  std::vector<std::vector<double>> forwardEnd(p, std::vector<double>(m, -1)),
      backwardEnd(p, std::vector<double>(m, -1));
  std::vector<size_t> next(p, 0);
  std::vector<double> free(p, 0);
  Json events = Json::array();
  double link = plan.pointToPointTime / 2;
  bool progress = true;
  while (progress) {
    progress = false;
    for (int64_t s = 0; s < p; ++s) {
      if (next[s] >= order[s].size())
        continue;
      Task task = order[s][next[s]];
      double ready;
      if (task.forward)
        ready = s == 0 ? 0 : forwardEnd[s - 1][task.microbatch];
      else
        ready = s == p - 1 ? forwardEnd[s][task.microbatch]
                           : backwardEnd[s + 1][task.microbatch];
      if (ready < 0)
        continue;
      if (task.forward ? s > 0 : s < p - 1)
        ready += link;
      double duration = plan.stageMicrobatchTime[s] * (task.forward ? 1 : 2) / 3;
      double start = std::max(ready, free[s]);
      free[s] = start + duration;
      (task.forward ? forwardEnd : backwardEnd)[s][task.microbatch] = free[s];
      events.push_back({{"name", (task.forward ? "F" : "B") +
                                     std::to_string(task.microbatch)},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", s},
                        {"ts", start * 1e6},
                        {"dur", duration * 1e6}});
      ++next[s];
      progress = true;
    }
  }
  for (int64_t s = 0; s < p; ++s) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", s},
                      {"args", {{"name", "stage " + std::to_string(s)}}}});
    if (plan.time.dataParallelComm > 0)
      events.push_back({{"name", "data-parallel reduction"},
                        {"ph", "X"},
                        {"pid", 0},
                        {"tid", s},
                        {"ts", free[s] * 1e6},
                        {"dur", plan.time.dataParallelComm * 1e6}});
  }
  Json trace = {{"traceEvents", events},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"plan", plan.describe()},
                  {"note", "interleaved and zero-bubble schedules are drawn "
                           "as 1F1B; their bubble is in the step time"}}}};
  return trace.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}
