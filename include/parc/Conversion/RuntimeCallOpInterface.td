//===- RuntimeCallOpInterface.td - ops as libparcrt calls --*- tablegen -*-===//

#ifndef PARC_CONVERSION_RUNTIMECALLOPINTERFACE_TD
#define PARC_CONVERSION_RUNTIMECALLOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def RuntimeCallOpInterface : OpInterface<"RuntimeCallOpInterface"> {
  let cppNamespace = "::mlir::parc";
  let description = [{
    How an op of a partitioned program becomes a call into libparcrt's C
    ABI (runtime/include/parcrt/parcrt.h): the callee and the op's integer
    and floating-point attributes in the order the ABI lists them. Operand
    and result descriptors are added by the lowering. Attached to the parc
    and dist ops from lib/Conversion.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the callee (`parcrt_matmul`, ...) and appends the op's
        attributes to `ints` and `floats`. `meshAxes` are the mesh's axis
        names in order, for collectives to name their group by position.
      }], "::mlir::FailureOr<::llvm::StringRef>", "getRuntimeCall",
      (ins "::llvm::ArrayRef<::llvm::StringRef>":$meshAxes,
           "::llvm::SmallVectorImpl<int64_t> &":$ints,
           "::llvm::SmallVectorImpl<double> &":$floats)>
  ];
}

#endif // PARC_CONVERSION_RUNTIMECALLOPINTERFACE_TD
