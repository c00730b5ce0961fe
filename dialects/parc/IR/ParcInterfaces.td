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

#endif // PARC_IR_PARCINTERFACES_TD
