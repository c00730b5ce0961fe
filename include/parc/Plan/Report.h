//===- Report.h - what parc-plan writes -------------------------*- C++ -*-===//
//
// The chosen plan as plan.json (the contract with parc-compile), the text or
// markdown report a person reads, the JSON summary for scripts, the
// Megatron-LM arguments and DeepSpeed config of the same configuration, and
// a Chrome trace of one step of its schedule.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_REPORT_H
#define PARC_PLAN_REPORT_H

#include "parc/Plan/Plan.h"
#include "parc/Plan/Search.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::parc {

/// Describes the run for the report's header.
struct ReportContext {
  std::string model;
  std::string cluster;
  const SearchOptions *options = nullptr;
  double searchSeconds = 0;
  /// Alternatives listed after the chosen plan.
  int64_t top = 5;
};

/// plan.json for `plan`: the mesh, the inputs split over dp, every
/// parameter and named value as the strategy ILP laid it out, and the
/// choices and predictions.
Plan buildPlan(const EvaluatedPlan &plan, const ModelGraph &graph,
               const ReportContext &context);

/// The ops of `step` (the train step of `graph`'s model under `plan`, after
/// sharding propagation) whose result propagation laid out otherwise than
/// `plan`'s strategy ILP, as pins ("@N") in the ILP's layout.
/// None where the step's ops, recomputation's copies aside, are not the
/// training graph's, and none for a value the ILP or propagation leaves a
/// pending sum (as a weight's gradient over dp, which ZeRO reduce-scatters).
std::vector<NamedSharding> findLayoutPins(func::FuncOp step,
                                          const EvaluatedPlan &plan,
                                          const ModelGraph &graph);

/// The report (`markdown` selects tables for --report).
void printReport(llvm::raw_ostream &os, const SearchResult &result,
                 const ModelGraph &graph, const ReportContext &context,
                 bool markdown, const EvaluatedPlan *baseline);

/// {"predicted", "plan", "alternatives", "rejected"} as issue 9 specifies.
std::string writeJsonSummary(const SearchResult &result,
                             const ModelGraph &graph,
                             const ReportContext &context);

/// Megatron-LM command-line arguments for `plan`.
std::string writeMegatronArguments(const EvaluatedPlan &plan,
                                   const SearchOptions &options);

/// A DeepSpeed JSON config for `plan`.
std::string writeDeepSpeedConfig(const EvaluatedPlan &plan,
                                 const SearchOptions &options);

/// A Chrome/Perfetto trace (JSON) of one step of `plan`'s schedule: per
/// stage, the forward and backward pass of each micro-batch, the sends
/// between stages and the data-parallel reduction.
std::string writeScheduleTrace(const EvaluatedPlan &plan);

} // namespace mlir::parc

#endif // PARC_PLAN_REPORT_H
