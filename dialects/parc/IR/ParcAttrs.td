//===- ParcAttrs.td - parc dialect attributes --------------*- tablegen -*-===//

#ifndef PARC_IR_PARCATTRS_TD
#define PARC_IR_PARCATTRS_TD

include "parc/IR/ParcBase.td"
include "mlir/IR/EnumAttr.td"

def Parc_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how gelu evaluates the Gaussian CDF", [
      I32EnumAttrCase<"Erf", 0, "erf">,
      I32EnumAttrCase<"Tanh", 1, "tanh">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::parc";
}
def Parc_GeluApproximationAttr
    : EnumAttr<Parc_Dialect, Parc_GeluApproximation, "gelu_approximation"> {
  // The op prints the keyword after its own space: `parc.gelu tanh %x`.
  let assemblyFormat = "`` $value";
}

def Parc_ComparisonPredicate : I32EnumAttr<"ComparisonPredicate",
    "the relation parc.compare tests", [
      I32EnumAttrCase<"Eq", 0, "eq">,
      I32EnumAttrCase<"Ne", 1, "ne">,
      I32EnumAttrCase<"Lt", 2, "lt">,
      I32EnumAttrCase<"Le", 3, "le">,
      I32EnumAttrCase<"Gt", 4, "gt">,
      I32EnumAttrCase<"Ge", 5, "ge">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::parc";
}
def Parc_ComparisonPredicateAttr
    : EnumAttr<Parc_Dialect, Parc_ComparisonPredicate, "comparison"> {
  let assemblyFormat = "`` $value";
}

def Parc_ActivationKind : I32EnumAttr<"ActivationKind",
    "the activation whose derivative parc.activation_grad applies", [
      I32EnumAttrCase<"Relu", 0, "relu">,
      I32EnumAttrCase<"Sigmoid", 1, "sigmoid">,
      I32EnumAttrCase<"Silu", 2, "silu">,
      I32EnumAttrCase<"Tanh", 3, "tanh">,
      I32EnumAttrCase<"GeluErf", 4, "gelu_erf">,
      I32EnumAttrCase<"GeluTanh", 5, "gelu_tanh">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::parc";
}
def Parc_ActivationKindAttr
    : EnumAttr<Parc_Dialect, Parc_ActivationKind, "activation"> {
  let assemblyFormat = "`` $value";
}

def Parc_InitDistribution : I32EnumAttr<"InitDistribution",
    "distribution of deterministic initial values", [
      I32EnumAttrCase<"Normal", 0, "normal">,
      I32EnumAttrCase<"Uniform", 1, "uniform">,
      I32EnumAttrCase<"Constant", 2, "constant">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::parc";
}

def Parc_InitAttr : AttrDef<Parc_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "how a model argument is initialized when no file gives it";
  let description = [{
    `#parc.init<normal(mean, std)>`, `#parc.init<uniform(low, high)>` (integer
    tensors take the floor, so `uniform(0, 50257)` draws token ids) or
    `#parc.init<constant(value)>`. The values come from the counter-based
    generator documented in docs/initialization.md.
  }];
  let parameters = (ins "InitDistribution":$distribution,
                        APFloatParameter<"mean, low or value">:$first,
                        APFloatParameter<"std or high">:$second);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // PARC_IR_PARCATTRS_TD
