//===- ConvolutionGeometry.h - the geometry of conv2d -----------*- C++ -*-===//
//
// The geometry that conv2d and its gradients share, and the shape rule
// their verifiers and the kernels' callers use.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IR_CONVOLUTIONGEOMETRY_H
#define PARC_IR_CONVOLUTIONGEOMETRY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir::parc {
struct ConvolutionGeometry {
  /// [height, width].
  ArrayRef<int64_t> strides;
  /// [top, left, bottom, right], as ONNX's pads.
  ArrayRef<int64_t> padding;
  /// [height, width].
  ArrayRef<int64_t> dilations;
  int64_t groups;
};

/// The geometry of conv2d or one of its gradients.
template <typename ConvolutionOp>
ConvolutionGeometry getConvolutionGeometry(ConvolutionOp op) {
  return {op.getStrides(), op.getPadding(), op.getDilations(),
          static_cast<int64_t>(op.getGroups())};
}

/// conv2d's result shape over an [N, C, H, W] input and an [O, C / groups,
/// KH, KW] weight; failure with `error` set when they do not fit together.
FailureOr<SmallVector<int64_t>>
getConvolutionResultShape(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                          const ConvolutionGeometry &geometry,
                          std::string &error);

/// The FLOPs of a convolution with `weight` producing `result` (its
/// gradients do as many), saturating at int64's maximum.
int64_t getConvolutionFlops(ArrayRef<int64_t> weight, ArrayRef<int64_t> result);
} // namespace mlir::parc

#endif // PARC_IR_CONVOLUTIONGEOMETRY_H
