//===- ConvolutionOps.cpp - shapes of the convolutions and poolings -------===//
//
// conv2d and the poolings infer their results; the gradients are given
// theirs and check it by computing the forward op's result from it. Every
// size is checked before it is combined, so no geometry overflows int64.
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ConvolutionGeometry.h"
#include "parc/IR/ParcOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace mlir::parc;

/// The output size of one spatial dimension, or a message.
static FailureOr<int64_t> outputSize(int64_t size, int64_t padBegin,
                                     int64_t padEnd, int64_t kernel,
                                     int64_t stride, int64_t dilation,
                                     StringRef dimension, std::string &error) {
  std::optional<int64_t> padded = llvm::checkedAdd(size, padBegin);
  if (padded)
    padded = llvm::checkedAdd(*padded, padEnd);
  std::optional<int64_t> span = llvm::checkedMul(dilation, kernel - 1);
  if (span)
    span = llvm::checkedAdd(*span, int64_t(1));
  if (!padded || !span) {
    error = llvm::formatv("the {0} geometry overflows int64", dimension);
    return failure();
  }
  if (*span > *padded) {
    error = llvm::formatv("the dilated kernel's {0} ({1}) exceeds the padded "
                          "input's ({2})",
                          dimension, *span, *padded);
    return failure();
  }
  return (*padded - *span) / stride + 1;
}

FailureOr<SmallVector<int64_t>> mlir::parc::getConvolutionResultShape(
    ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
    const ConvolutionGeometry &geometry, std::string &error) {
  if (input.size() != 4 || weight.size() != 4) {
    error = llvm::formatv("'input' and 'weight' must have rank 4, got {0} "
                          "and {1}",
                          input.size(), weight.size());
    return failure();
  }
  if (geometry.strides.size() != 2 || geometry.dilations.size() != 2 ||
      geometry.padding.size() != 4) {
    error = "strides and dilations need 2 values and padding 4";
    return failure();
  }
  for (int64_t value :
       llvm::concat<const int64_t>(geometry.strides, geometry.dilations))
    if (value < 1) {
      error = llvm::formatv("strides and dilations must be positive, got {0}",
                            value);
      return failure();
    }
  for (int64_t value : geometry.padding)
    if (value < 0) {
      error = llvm::formatv("padding must not be negative, got {0}", value);
      return failure();
    }
  int64_t groups = geometry.groups, channels = input[1], filters = weight[0];
  if (groups < 1 || channels % groups != 0 || filters % groups != 0) {
    error = llvm::formatv("{0} groups must divide the {1} input channels "
                          "and the {2} filters",
                          groups, channels, filters);
    return failure();
  }
  if (weight[1] != channels / groups) {
    error = llvm::formatv("'weight' dimension 1 has size {0}, but the {1} "
                          "input channels in {2} groups give {3} per group",
                          weight[1], channels, groups, channels / groups);
    return failure();
  }
  SmallVector<int64_t> shape = {input[0], filters};
  for (int64_t dim : {0, 1}) {
    FailureOr<int64_t> size = outputSize(
        input[2 + dim], geometry.padding[dim], geometry.padding[2 + dim],
        weight[2 + dim], geometry.strides[dim], geometry.dilations[dim],
        dim == 0 ? "height" : "width", error);
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  return shape;
}

int64_t mlir::parc::getConvolutionFlops(ArrayRef<int64_t> weight,
                                        ArrayRef<int64_t> result) {
  // A multiply-add per output element and weight element of its group.
  int64_t flops = 2;
  for (int64_t size :
       llvm::concat<const int64_t>(result, weight.drop_front())) {
    std::optional<int64_t> product = llvm::checkedMul(flops, size);
    if (!product)
      return std::numeric_limits<int64_t>::max();
    flops = *product;
  }
  return flops;
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  auto input = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = dyn_cast<RankedTensorType>(adaptor.getWeight().getType());
  if (!input || !weight || !input.hasStaticShape() || !weight.hasStaticShape())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op operands must be static-shape tensors");
  if (input.getElementType() != weight.getElementType())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op 'input' and 'weight' element types differ");
  std::string error;
  FailureOr<SmallVector<int64_t>> shape = getConvolutionResultShape(
      input.getShape(), weight.getShape(),
      {adaptor.getStrides(), adaptor.getPadding(), adaptor.getDilations(),
       static_cast<int64_t>(adaptor.getGroups())},
      error);
  if (failed(shape))
    return emitOptionalError(loc, "'", getOperationName(), "' op ", error);
  results.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

int64_t Conv2dOp::getFlopCount() {
  return getConvolutionFlops(getWeight().getType().getShape(),
                             getType().getShape());
}

/// Checks that `gradient` has the shape of the forward op's result.
static LogicalResult checkGradientShape(Operation *op,
                                        RankedTensorType gradient,
                                        ArrayRef<int64_t> expected,
                                        StringRef forward) {
  if (expected == gradient.getShape())
    return success();
  return op->emitOpError("'gradient' has type ")
         << gradient << ", but the " << forward << "'s result has shape "
         << llvm::formatv("[{0:$[, ]}]",
                          llvm::make_range(expected.begin(), expected.end()))
                .str();
}

/// Checks that conv2d over `input` and `weight` gives `gradient`'s shape.
template <typename OpT>
static LogicalResult verifyGradient(OpT op, RankedTensorType input,
                                    RankedTensorType weight) {
  RankedTensorType gradient = op.getGradient().getType();
  if (input.getElementType() != weight.getElementType() ||
      gradient.getElementType() != input.getElementType())
    return op.emitOpError("operands and result must have one element type");
  std::string error;
  FailureOr<SmallVector<int64_t>> shape = getConvolutionResultShape(
      input.getShape(), weight.getShape(), getConvolutionGeometry(op), error);
  if (failed(shape))
    return op.emitOpError(error);
  return checkGradientShape(op, gradient, *shape, "convolution");
}

LogicalResult Conv2dInputGradOp::verify() {
  return verifyGradient(*this, getType(), getWeight().getType());
}

int64_t Conv2dInputGradOp::getFlopCount() {
  return getConvolutionFlops(getWeight().getType().getShape(),
                             getGradient().getType().getShape());
}

LogicalResult Conv2dWeightGradOp::verify() {
  return verifyGradient(*this, getInput().getType(), getType());
}

int64_t Conv2dWeightGradOp::getFlopCount() {
  return getConvolutionFlops(getType().getShape(),
                             getGradient().getType().getShape());
}

FailureOr<SmallVector<int64_t>> mlir::parc::getPoolingResultShape(
    ArrayRef<int64_t> input, const PoolingWindow &window, std::string &error) {
  if (input.size() != 4) {
    error = llvm::formatv("'input' must have rank 4, got {0}", input.size());
    return failure();
  }
  if (window.kernel.size() != 2 || window.padding.size() != 4) {
    error = "kernel needs 2 values and padding 4";
    return failure();
  }
  for (int64_t size : window.kernel)
    if (size < 1) {
      error = llvm::formatv("kernel sizes must be positive, got {0}", size);
      return failure();
    }
  // Within half the window every window holds an input element.
  for (auto [side, pad] : llvm::enumerate(window.padding))
    if (pad > window.kernel[side % 2] / 2) {
      error = llvm::formatv("padding {0} exceeds half the kernel's {1}", pad,
                            window.kernel[side % 2]);
      return failure();
    }
  // Each channel is a group of one with a window of one channel.
  int64_t channels = input[1];
  SmallVector<int64_t> weight = {channels, 1, window.kernel[0],
                                 window.kernel[1]};
  return getConvolutionResultShape(input, weight,
                                   {window.strides, window.padding,
                                    window.dilations,
                                    std::max<int64_t>(channels, 1)},
                                   error);
}

template <typename OpT>
static LogicalResult inferPoolingResult(std::optional<Location> loc,
                                        typename OpT::Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  auto input = dyn_cast<RankedTensorType>(adaptor.getInput().getType());
  if (!input || !input.hasStaticShape())
    return emitOptionalError(loc, "'", OpT::getOperationName(),
                             "' op 'input' must be a static-shape tensor");
  std::string error;
  FailureOr<SmallVector<int64_t>> shape =
      getPoolingResultShape(input.getShape(),
                            {adaptor.getKernel(), adaptor.getStrides(),
                             adaptor.getDilations(), adaptor.getPadding()},
                            error);
  if (failed(shape))
    return emitOptionalError(loc, "'", OpT::getOperationName(), "' op ", error);
  results.push_back(RankedTensorType::get(*shape, input.getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPoolingResult<MaxPool2dOp>(loc, adaptor, results);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferPoolingResult<AvgPool2dOp>(loc, adaptor, results);
}

/// A comparison or an addition per window element and output element.
static int64_t getPoolingFlops(ArrayRef<int64_t> kernel, ShapedType result) {
  std::optional<int64_t> flops = llvm::checkedMul(kernel[0], kernel[1]);
  if (flops)
    flops = llvm::checkedMul(*flops, result.getNumElements());
  return flops ? *flops : std::numeric_limits<int64_t>::max();
}

int64_t MaxPool2dOp::getFlopCount() {
  return getPoolingFlops(getKernel(), getType());
}

int64_t AvgPool2dOp::getFlopCount() {
  return getPoolingFlops(getKernel(), getType());
}

/// Checks that pooling the result's shape gives `gradient`'s shape.
template <typename OpT> static LogicalResult verifyPoolingGradient(OpT op) {
  RankedTensorType input = op.getType(), gradient = op.getGradient().getType();
  if (input.getElementType() != gradient.getElementType())
    return op.emitOpError("'gradient' and result element types differ");
  std::string error;
  FailureOr<SmallVector<int64_t>> shape =
      getPoolingResultShape(input.getShape(), getPoolingWindow(op), error);
  if (failed(shape))
    return op.emitOpError(error);
  return checkGradientShape(op, gradient, *shape, "pooling");
}

LogicalResult MaxPool2dGradOp::verify() { return verifyPoolingGradient(*this); }

LogicalResult AvgPool2dGradOp::verify() { return verifyPoolingGradient(*this); }

int64_t MaxPool2dGradOp::getFlopCount() {
  return getPoolingFlops(getKernel(), getGradient().getType());
}

int64_t AvgPool2dGradOp::getFlopCount() {
  return getPoolingFlops(getKernel(), getGradient().getType());
}
