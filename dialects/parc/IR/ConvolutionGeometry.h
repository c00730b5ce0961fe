//===- ConvolutionGeometry.h - the geometry of conv2d -----------*- C++ -*-===//
//
// The geometry that conv2d and its gradients share, the window of the
// poolings, and the shape rules of both.
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
/// The window of max_pool2d, avg_pool2d and their gradients.
struct PoolingWindow {
  /// [height, width] each.
  ArrayRef<int64_t> kernel, strides, dilations;
  /// [top, left, bottom, right].
  ArrayRef<int64_t> padding;
};

template <typename PoolingOp> PoolingWindow getPoolingWindow(PoolingOp op) {
  return {op.getKernel(), op.getStrides(), op.getDilations(), op.getPadding()};
}

/// A pooling's result shape over an [N, C, H, W] input (conv2d's rule, the
/// window as a kernel per channel); failure with `error` set where the
/// window does not fit or the padding exceeds half the window.
FailureOr<SmallVector<int64_t>>
getPoolingResultShape(ArrayRef<int64_t> input, const PoolingWindow &window,
                      std::string &error);
} // namespace mlir::parc

#endif // PARC_IR_CONVOLUTIONGEOMETRY_H
