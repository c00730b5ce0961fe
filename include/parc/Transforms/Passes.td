//===- Passes.td - parc graph passes -----------------------*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_PASSES_TD
#define PARC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyModelPass : Pass<"parc-verify-model", "::mlir::ModuleOp"> {
  let summary = "Checks the model convention of every function";
  let description = [{
    Every argument of every `func.func` must be a static-shape tensor with a
    `parc.role` (param, input, label) and a `parc.name` unique within its
    function; result names must be unique. Each violation is reported at the
    argument's location.
  }];
  let dependentDialects = ["::mlir::parc::ParcDialect"];
}

def PrintModelStatsPass : Pass<"parc-print-model-stats", "::mlir::ModuleOp"> {
  let summary = "Prints parameters, FLOPs per step and op counts";
  let description = [{
    For each function: the parameter count and bytes of its `param`
    arguments, its forward FLOPs from each op's FlopCountOpInterface, the
    training estimate (3x forward) and a histogram of its ops. Prints to
    stdout and leaves the IR unchanged.
  }];
}

def PrintShardingRulesPass : Pass<"parc-print-sharding-rules"> {
  let summary = "Attaches each op's sharding rule as a readable attribute";
  let description = [{
    A debugging aid that makes the rule table reviewable in one lit test:
    every op implementing ShardingRuleOpInterface gets a string attribute
    `parc.sharding_rule` such as
    `([i, k], [k, j]) -> ([i, j]) {i=8, j=32, k=16 reduction}`.
  }];
}

#endif // PARC_TRANSFORMS_PASSES_TD
