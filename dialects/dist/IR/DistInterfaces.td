//===- DistInterfaces.td - interfaces of dist ops ----------*- tablegen -*-===//

#ifndef DIST_IR_DISTINTERFACES_TD
#define DIST_IR_DISTINTERFACES_TD

include "mlir/IR/OpBase.td"

def Dist_CommunicationOpInterface : OpInterface<"CommunicationOpInterface"> {
  let cppNamespace = "::mlir::dist";
  let description = [{
    How much data a collective moves, for the communication report and the
    cost model. `getBufferBytes` is the full tensor the collective covers on
    each rank (the all-reduced tensor, the gathered result); the traffic is
    what each rank sends in the bandwidth-optimal (ring) algorithm:
    all_reduce 2(n-1)/n of the buffer, all_gather, reduce_scatter and
    all_to_all (n-1)/n, all_slice nothing; a send its tensor, the matching
    receive nothing (the message is counted once).
  }];
  let methods = [
    InterfaceMethod<[{
        The mesh axes whose ranks form the group (of a point-to-point op:
        the axis its peer lies on).
      }], "::mlir::ArrayAttr", "getGroupAxes", (ins), [{}], [{
        return $_op.getAxes();
      }]>,
    InterfaceMethod<"Bytes of the full tensor on each rank.",
      "int64_t", "getBufferBytes">,
    InterfaceMethod<[{
        Bytes each rank sends, for a group of `groupSize` ranks.
      }], "double", "getTrafficBytes", (ins "int64_t":$groupSize)>
  ];
}

#endif // DIST_IR_DISTINTERFACES_TD
