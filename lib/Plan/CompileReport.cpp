//===- CompileReport.cpp - what a compiled program needs per rank ---------===//

#include "parc/Plan/CompileReport.h"

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/LocalSgd.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/ParameterServer.h"
#include "parc/Transforms/StaleWeights.h"

#include "dist/IR/DistOps.h"
#include "llvm/Support/Format.h"

#include <array>
#include <set>

using namespace mlir;
using namespace mlir::parc;

double CompiledFigures::getTrafficBytes() const {
  double traffic = 0;
  for (const CollectiveRecord &record : collectives)
    traffic += record.trafficBytes;
  if (averaging)
    traffic += averaging->getTrafficBytes() / double(averaging->syncEvery);
  return traffic;
}

/// The bytes of what ops of phase `from` define and ops of phase `to` read:
/// what a rank holds from one part of the step into the next.
static int64_t getBytesCarried(func::FuncOp func, Phase from, Phase to) {
  int64_t bytes = 0;
  func.walk([&](Operation *op) {
    if (!op->hasAttr(kPhaseAttrName) || getPhase(op) != from)
      return;
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return user->hasAttr(kPhaseAttrName) && getPhase(user) == to;
          }))
        bytes += getTensorBytes(cast<ShapedType>(result.getType()));
  });
  return bytes;
}

/// The term of the memory model each tensor of `func` counts in: its
/// argument's role; for a value its phase and what reads it; a value that
/// takes an argument's buffer (its next value) counts as the argument.
static int64_t PeakComposition::*
getMemoryTerm(func::FuncOp func, const TensorLifetime &lifetime,
              const llvm::DenseMap<int64_t, ArgumentRole> &roleAtOffset) {
  using Term = int64_t PeakComposition::*;
  auto termOf = [&](ArgumentRole role, bool stale) -> Term {
    switch (role) {
    case ArgumentRole::Param:
    case ArgumentRole::Buffer:
      return &PeakComposition::parameters;
    case ArgumentRole::OptState:
      return &PeakComposition::optimizerState;
    case ArgumentRole::Input:
    case ArgumentRole::Label:
      return &PeakComposition::inputs;
    case ArgumentRole::Carry:
      return stale ? &PeakComposition::parameters
                   : &PeakComposition::activations;
    }
    llvm_unreachable("unknown argument role");
  };
  if (auto argument = dyn_cast<BlockArgument>(lifetime.value))
    return termOf(roleAtOffset.at(lifetime.offset),
                  func.getArgAttr(argument.getArgNumber(), kStaleOfAttrName) !=
                      nullptr);
  auto argument = roleAtOffset.find(lifetime.offset);
  if (argument != roleAtOffset.end())
    return termOf(argument->second, argument->second == ArgumentRole::Carry);
  Operation *writer = lifetime.value.getDefiningOp();
  auto readIn = [&](Phase phase) {
    return llvm::any_of(lifetime.value.getUsers(), [&](Operation *user) {
      return user->hasAttr(kPhaseAttrName) && getPhase(user) == phase;
    });
  };
  if (!writer->hasAttr(kPhaseAttrName))
    return &PeakComposition::temporaries;
  if (getPhase(writer) == Phase::Forward && readIn(Phase::Backward))
    return &PeakComposition::activations;
  if (getPhase(writer) == Phase::Backward && readIn(Phase::Update))
    return &PeakComposition::gradients;
  return &PeakComposition::temporaries;
}

/// A sweep over the tensors' lifetimes for the position with the most
/// bytes live. A tensor whose buffer a result takes over (in place, or an
/// argument's next value) stops counting where that result starts.
static FailureOr<PeakComposition>
measurePeakComposition(func::FuncOp func, ArrayRef<ModelArgument> arguments) {
  FailureOr<SmallVector<TensorLifetime>> lifetimes = getTensorLifetimes(func);
  if (failed(lifetimes))
    return failure();
  llvm::DenseMap<int64_t, ArgumentRole> roleAtOffset;
  // An empty argument shares its offset with the next tensor: it owns none.
  for (const ModelArgument &argument : arguments)
    if (std::optional<int64_t> offset =
            getArenaOffset(func.getArgument(argument.index));
        offset && getTensorBytes(argument.type) > 0)
      roleAtOffset[*offset] = argument.role;
  std::set<std::pair<int64_t, int64_t>> starts; // (offset, start)
  int64_t positions = 0;
  for (const TensorLifetime &lifetime : *lifetimes) {
    starts.insert({lifetime.offset, lifetime.start});
    positions = std::max(positions, lifetime.end + 2);
  }
  // change[term][p + 1]: bytes of `term` that start or stop being live at
  // position p.
  constexpr std::array<int64_t PeakComposition::*, 6> terms = {
      &PeakComposition::parameters, &PeakComposition::optimizerState,
      &PeakComposition::inputs,     &PeakComposition::activations,
      &PeakComposition::gradients,  &PeakComposition::temporaries};
  std::vector<PeakComposition> change(positions + 1);
  for (const TensorLifetime &lifetime : *lifetimes) {
    int64_t end = lifetime.end;
    if (end > lifetime.start && starts.count({lifetime.offset, end}))
      --end;
    auto term = getMemoryTerm(func, lifetime, roleAtOffset);
    change[lifetime.start + 1].*term += lifetime.bytes;
    change[end + 2].*term -= lifetime.bytes;
  }
  PeakComposition live, peak;
  for (int64_t p = -1; p + 1 < positions; ++p) {
    for (auto term : terms)
      live.*term += change[p + 1].*term;
    if (live.getLiveBytes() > peak.getLiveBytes()) {
      peak = live;
      peak.position = p;
    }
  }
  if (peak.position >= 0) {
    Operation &op = *std::next(func.getBody().front().begin(), peak.position);
    peak.op = "'" + op.getName().getStringRef().str() + "'";
    if (op.hasAttr(kPhaseAttrName))
      peak.op += getPhase(&op) == Phase::Forward    ? " (forward)"
                 : getPhase(&op) == Phase::Backward ? " (backward)"
                                                    : " (update)";
  }
  return peak;
}

FailureOr<CompiledFigures> mlir::parc::measureCompiledProgram(func::FuncOp func) {
  auto arena = func->getAttrOfType<IntegerAttr>(kArenaBytesAttrName);
  auto tensors = func->getAttrOfType<IntegerAttr>(kTensorBytesAttrName);
  if (!arena || !tensors)
    return func.emitError("the function has no memory plan "
                          "(--parc-plan-memory)");
  CompiledFigures figures;
  figures.arenaBytes = arena.getInt();
  figures.tensorBytes = tensors.getInt();
  if (auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh"))
    if (dist::MeshOp mesh = dist::lookupMesh(func, meshName))
      figures.ranks = mesh.getNumRanks();
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  for (const ModelArgument &argument : *arguments) {
    if (argument.role == ArgumentRole::Param)
      figures.parameterBytes += getTensorBytes(argument.type);
    if (argument.role == ArgumentRole::OptState)
      figures.optimizerStateBytes += getTensorBytes(argument.type);
    if (argument.role == ArgumentRole::Carry)
      (func.getArgAttr(argument.index, kStaleOfAttrName)
           ? figures.staleWeightBytes
           : figures.carriedActivationBytes) += getTensorBytes(argument.type);
  }
  FailureOr<std::optional<LocalSgdAveraging>> averaging =
      getLocalSgdAveraging(func);
  if (failed(averaging))
    return failure();
  figures.averaging = *averaging;
  // Gradients: whole at ZeRO 0-1, this rank's shard at ZeRO 2-3.
  figures.gradientBytes = getBytesCarried(func, Phase::Backward, Phase::Update);
  figures.activationBytes =
      getBytesCarried(func, Phase::Forward, Phase::Backward);
  figures.collectives = collectCollectives(func);
  FailureOr<PeakComposition> peak = measurePeakComposition(func, *arguments);
  if (failed(peak))
    return failure();
  figures.peak = std::move(*peak);
  return figures;
}

PredictedStages
mlir::parc::findPredictedStages(ArrayRef<func::FuncOp> stages,
                                ArrayRef<CompiledFigures> figures) {
  std::optional<PredictedStages> found;
  for (auto [stage, func] : llvm::enumerate(stages)) {
    if (isDedicatedServers(func))
      continue;
    if (!found)
      found = PredictedStages{stage, stage};
    if (figures[stage].arenaBytes > figures[found->heaviest].arenaBytes)
      found->heaviest = stage;
    if (figures[stage].getTrafficBytes() >
        figures[found->busiest].getTrafficBytes())
      found->busiest = stage;
  }
  return found.value_or(PredictedStages{});
}

/// " (predicted 1234, compiled / predicted 0.98)" when the plan predicted it.
static void printPrediction(llvm::raw_ostream &os, std::optional<double> value,
                            double compiled) {
  if (!value || *value <= 0)
    return;
  os << " (parc-plan predicted " << llvm::format("%.0f", *value)
     << ", compiled / predicted " << llvm::format("%.3f", compiled / *value)
     << ")";
}

void mlir::parc::printCompileSummary(llvm::raw_ostream &os,
                                     const CompiledFigures &figures,
                                     const Plan *memoryPlan,
                                     const Plan *trafficPlan) {
  auto predictionOf = [](const Plan *plan) {
    return plan && plan->predicted ? &*plan->predicted : nullptr;
  };
  int64_t arena = figures.arenaBytes, tensors = figures.tensorBytes;
  os << "ranks: " << figures.ranks << "\n";
  os << "peak arena bytes per rank: " << arena << " (all tensors: " << tensors;
  // Tensors of a few bytes each take a 64-byte aligned buffer, so a tiny
  // program's arena can exceed the sum of its tensors.
  if (arena > tensors)
    os << ", alignment adds " << arena - tensors << ")";
  else
    os << ", saved "
       << llvm::format("%.1f",
                       tensors ? 100.0 * (tensors - arena) / tensors : 0.0)
       << "%)";
  if (const Prediction *predicted = predictionOf(memoryPlan))
    printPrediction(os, predicted->peakMemoryBytesPerRank, arena);
  os << "\n";
  const PeakComposition &peak = figures.peak;
  os << "  at the most bytes live ("
     << (peak.position < 0
             ? std::string("before the first op")
             : "op #" + std::to_string(peak.position) + " " + peak.op)
     << "): parameters " << peak.parameters << ", optimizer state "
     << peak.optimizerState << ", inputs " << peak.inputs
     << ", saved activations " << peak.activations << ", gradients "
     << peak.gradients << ", temporaries " << peak.temporaries
     << "; unused by the placement " << arena - peak.getLiveBytes() << "\n";
  os << "parameter bytes per rank: " << figures.parameterBytes << "\n";
  os << "gradient bytes per rank: " << figures.gradientBytes << "\n";
  os << "optimizer state bytes per rank: " << figures.optimizerStateBytes
     << "\n";
  if (figures.activationBytes)
    os << "activation bytes per rank (saved for the backward pass): "
       << figures.activationBytes << "\n";
  if (figures.staleWeightBytes || figures.carriedActivationBytes)
    os << "stale weight bytes per rank: " << figures.staleWeightBytes
       << "\ncarried activation bytes per rank (between steps): "
       << figures.carriedActivationBytes << "\n";
  os << "collectives per step:\n";
  CommunicationTotals all;
  for (const CollectiveRecord &record : figures.collectives)
    all.add(record);
  for (const auto &[kind, totals] : totalsByKind(figures.collectives))
    printTotals(os, kind, totals);
  printTotals(os, "total", all);
  if (figures.averaging)
    figures.averaging->print(os);
  if (const Prediction *predicted = predictionOf(trafficPlan);
      predicted && predicted->commBytesPerRank) {
    double traffic = figures.getTrafficBytes();
    os << "traffic per rank per step: " << llvm::format("%.0f", traffic);
    printPrediction(os, predicted->commBytesPerRank, traffic);
    os << "\n";
  }
}
