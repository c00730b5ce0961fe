//===- CompileReport.cpp - what a compiled program needs per rank ---------===//

#include "parc/Plan/CompileReport.h"

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/StaleWeights.h"

#include "dist/IR/DistOps.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::parc;

double CompiledFigures::getTrafficBytes() const {
  double traffic = 0;
  for (const CollectiveRecord &record : collectives)
    traffic += record.trafficBytes;
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
  // Gradients: whole at ZeRO 0-1, this rank's shard at ZeRO 2-3.
  figures.gradientBytes = getBytesCarried(func, Phase::Backward, Phase::Update);
  figures.activationBytes =
      getBytesCarried(func, Phase::Forward, Phase::Backward);
  figures.collectives = collectCollectives(func);
  return figures;
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
                                     const Plan *plan) {
  const Prediction *predicted =
      plan && plan->predicted ? &*plan->predicted : nullptr;
  int64_t arena = figures.arenaBytes, tensors = figures.tensorBytes;
  os << "ranks: " << figures.ranks << "\n";
  os << "peak arena bytes per rank: " << arena << " (all tensors: " << tensors
     << ", saved "
     << llvm::format("%.1f", tensors ? 100.0 * (tensors - arena) / tensors
                                     : 0.0)
     << "%)";
  if (predicted)
    printPrediction(os, predicted->peakMemoryBytesPerRank, arena);
  os << "\n";
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
  if (predicted && predicted->commBytesPerRank) {
    os << "traffic per rank per step: "
       << llvm::format("%.0f", all.trafficBytes);
    printPrediction(os, predicted->commBytesPerRank, all.trafficBytes);
    os << "\n";
  }
}
