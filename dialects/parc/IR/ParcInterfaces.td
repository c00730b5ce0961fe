//===- ParcInterfaces.td - interfaces of parc ops ----------*- tablegen -*-===//
//
// Passes reason about ops only through these interfaces, never by op name.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_PARCINTERFACES_TD
#define PARC_IR_PARCINTERFACES_TD

include "mlir/IR/OpBase.td"

def Parc_FlopCountOpInterface : OpInterface<"FlopCountOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    The floating-point operations an op performs in the forward pass, counted
    from its operand and result shapes. A multiply-add counts as two.
  }];
  let methods = [
    InterfaceMethod<"Returns the forward FLOPs of this op.", "int64_t",
      "getFlopCount", (ins), [{}], [{
        // Elementwise default: one operation per result element.
        int64_t flops = 0;
        for (::mlir::Type type : $_op->getResultTypes())
          flops += ::llvm::cast<::mlir::ShapedType>(type).getNumElements();
        return flops;
      }]>
  ];
}

def Parc_SumsPartialsOpInterface : OpInterface<"SumsPartialsOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    An op that is linear in all its operands together: given pending sums
    over the same mesh axes it yields their pending sum, so partitioning can
    defer the all_reduce past it (gradients of a tied weight, residuals).
  }];
  let methods = [
    InterfaceMethod<"Whether this op, with its operand and result types, is "
      "linear in its operands.", "bool", "sumsPartials", (ins), [{}], [{
        return true;
      }]>,
    InterfaceMethod<"Whether partitioning (and the planner's ILP) moves a "
      "pending sum past this op: it is linear and its results' elements are "
      "no wider than its operands', since the sum is cheaper in the "
      "narrower type (a gradient widened from bf16 to f32 is all-reduced in "
      "bf16).", "bool", "defersPendingSums", (ins), [{}], [{
        Operation *op = $_op.getOperation();
        auto bits = [](Value value) {
          return ::llvm::cast<ShapedType>(value.getType())
              .getElementTypeBitWidth();
        };
        return $_op.sumsPartials() && op->getNumOperands() > 0 &&
               ::llvm::all_of(op->getResults(), [&](Value result) {
                 return bits(result) <= bits(op->getOperand(0));
               });
      }]>
  ];
}

def Parc_UnfusedTrafficOpInterface : OpInterface<"UnfusedTrafficOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    For a fused op, the elements an unfused implementation writes to memory
    and reads back between its steps (attention before FlashAttention
    materializes its [seq x kv_seq] score matrices). The planner adds them
    to the op's memory traffic when it prices a software stack without
    fused kernels (`parc-plan --kernels unfused`), with a dropout step where
    that stack has one (Megatron-LM's attention dropout,
    `--attention-dropout`: its output written and read, its one-byte mask
    counted as half a 2-byte element).
  }];
  let methods = [
    InterfaceMethod<"Returns the elements moved through memory between the "
                    "steps of an unfused implementation, with its dropout "
                    "step when `withDropout`.",
      "int64_t", "getUnfusedIntermediateElements", (ins "bool":$withDropout)>
  ];
}

def Parc_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    The factor-based sharding rule of an op (see ShardingRule.h): which
    index spaces it has, which tensor dimensions each spans, and whether
    sharding it is free, leaves partial sums or is not allowed. Sharding
    propagation and partitioning consult only this interface.
  }];
  let methods = [
    InterfaceMethod<"Returns the op's sharding rule.",
      "::mlir::parc::ShardingRule", "getShardingRule", (ins), [{}], [{
        // Pointwise ops with numpy broadcasting share this rule.
        return ::mlir::parc::getBroadcastShardingRule($_op);
      }]>
  ];
}

def Parc_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    The vector-Jacobian product of an op, built from parc ops: reverse-mode
    autodiff asks each op for the gradients of its operands given the
    gradients of its results, and never switches over op names. Ops gain
    implementations with the autodiff pass (issue 5); until then no op
    implements it and autodiff reports such an op as having no gradient rule.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at the builder's insertion point, the gradient of the loss
        with respect to each operand from `resultGradients` (one per result).
        Returns one value per operand; a null value marks an operand without
        a gradient (integer ids, labels).
      }], "::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>",
      "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGradients)>
  ];
}

def Parc_OptimizerUpdateOpInterface : OpInterface<"OptimizerUpdateOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    One parameter's optimizer step: which operand is the parameter, which its
    gradient and which its per-parameter state (moments, momentum; not
    scalars shared by every update such as the step counter). ZeRO shards the
    state like the parameter and, at stage 3, the parameter itself.
  }];
  let methods = [
    InterfaceMethod<"Returns the parameter the step updates.",
      "::mlir::Value", "getUpdatedParameter", (ins), [{
        return $_op.getParam();
      }]>,
    InterfaceMethod<"Returns the parameter's gradient.",
      "::mlir::Value", "getParameterGradient", (ins), [{
        return $_op.getGrad();
      }]>,
    InterfaceMethod<"Returns the per-parameter optimizer state operands.",
      "::llvm::SmallVector<::mlir::Value>", "getParameterState">
  ];
}

#endif // PARC_IR_PARCINTERFACES_TD
