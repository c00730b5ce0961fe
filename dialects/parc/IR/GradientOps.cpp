//===- GradientOps.cpp - shapes and FLOP counts of the gradient ops -------===//

#include "parc/IR/ParcOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::parc;

static int64_t numElements(Type type) {
  return cast<ShapedType>(type).getNumElements();
}

//===----------------------------------------------------------------------===//
// BroadcastToOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastToOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (getInput().getType().getElementType() != getType().getElementType())
    return emitOpError("result element type differs from 'input'");
  if (in.size() > out.size())
    return emitOpError("cannot broadcast rank ")
           << in.size() << " to rank " << out.size();
  size_t offset = out.size() - in.size();
  for (auto [dim, size] : llvm::enumerate(in))
    if (size != 1 && size != out[offset + dim])
      return emitOpError("'input' dimension ")
             << dim << " of size " << size << " cannot broadcast to size "
             << out[offset + dim];
  return success();
}

int64_t BroadcastToOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// SliceGradOp
//===----------------------------------------------------------------------===//

LogicalResult SliceGradOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> out = getType().getShape();
  if (in.size() != out.size() ||
      getOffsets().size() != static_cast<int64_t>(in.size()) ||
      getStrides().size() != static_cast<int64_t>(in.size()))
    return emitOpError("'input', result, offsets and strides must all have "
                       "the same rank");
  for (size_t dim = 0; dim < in.size(); ++dim) {
    int64_t offset = getOffsets()[dim], stride = getStrides()[dim];
    if (offset < 0 || stride < 1 ||
        (in[dim] > 0 && offset + (in[dim] - 1) * stride >= out[dim]))
      return emitOpError("dimension ")
             << dim << ": " << in[dim] << " elements from offset " << offset
             << " with stride " << stride << " do not fit in size " << out[dim];
  }
  return success();
}

int64_t SliceGradOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// Elementwise and normalization gradients
//===----------------------------------------------------------------------===//

// A derivative and a product per element.
int64_t ActivationGradOp::getFlopCount() { return 8 * numElements(getType()); }

LogicalResult SoftmaxGradOp::verify() {
  int64_t rank = getType().getRank();
  if (getAxis() < 0 || getAxis() >= rank)
    return emitOpError("axis ") << getAxis() << " is out of range for rank "
                                << rank;
  return success();
}

// Product, sum, difference and product per element.
int64_t SoftmaxGradOp::getFlopCount() { return 4 * numElements(getType()); }

/// Checks (input, gamma, gradient) of a normalization gradient and returns
/// the input's type.
template <typename OpT>
static FailureOr<RankedTensorType>
checkNormalizationGrad(std::optional<Location> loc, Value input, Value gamma,
                       Value gradient) {
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto gammaType = dyn_cast<RankedTensorType>(gamma.getType());
  auto gradientType = dyn_cast<RankedTensorType>(gradient.getType());
  if (!inputType || !gammaType || !gradientType || inputType.getRank() < 1)
    return emitOptionalError(loc, "'", OpT::getOperationName(),
                             "' op needs ranked tensors, 'input' of rank >= 1");
  if (gradientType != inputType)
    return emitOptionalError(loc, "'", OpT::getOperationName(),
                             "' op 'gradient' must have the type of 'input'");
  if (gammaType.getRank() != 1 ||
      gammaType.getDimSize(0) != inputType.getShape().back() ||
      gammaType.getElementType() != inputType.getElementType())
    return emitOptionalError(loc, "'", OpT::getOperationName(),
                             "' op 'gamma' must be a vector as long as the "
                             "last dimension of 'input'");
  return inputType;
}

LogicalResult LayerNormGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input = checkNormalizationGrad<LayerNormGradOp>(
      loc, adaptor.getInput(), adaptor.getGamma(), adaptor.getGradient());
  if (failed(input))
    return failure();
  Type gamma = adaptor.getGamma().getType();
  results.append({*input, gamma, gamma});
  return success();
}

int64_t LayerNormGradOp::getFlopCount() {
  return 12 * numElements(getInput().getType());
}

LogicalResult RmsNormGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input = checkNormalizationGrad<RmsNormGradOp>(
      loc, adaptor.getInput(), adaptor.getGamma(), adaptor.getGradient());
  if (failed(input))
    return failure();
  results.append({*input, adaptor.getGamma().getType()});
  return success();
}

int64_t RmsNormGradOp::getFlopCount() {
  return 8 * numElements(getInput().getType());
}

//===----------------------------------------------------------------------===//
// EmbeddingGradOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingGradOp::verify() {
  ArrayRef<int64_t> ids = getIds().getType().getShape();
  ArrayRef<int64_t> gradient = getGradient().getType().getShape();
  RankedTensorType table = getType();
  if (table.getRank() != 2 ||
      gradient.size() != ids.size() + 1 || gradient.drop_back() != ids ||
      gradient.back() != table.getDimSize(1))
    return emitOpError("expects 'gradient' of shape ids x [dim] and a "
                       "[vocab, dim] result");
  return success();
}

// One add per gradient element.
int64_t EmbeddingGradOp::getFlopCount() {
  return numElements(getGradient().getType());
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  // The forward op's rules check query, key and value.
  SmallVector<Type> forward;
  SmallVector<Value> forwardOperands = {adaptor.getQuery(), adaptor.getKey(),
                                        adaptor.getValue()};
  if (adaptor.getMask())
    forwardOperands.push_back(adaptor.getMask());
  AttentionOp::Adaptor forwardAdaptor(forwardOperands);
  if (failed(AttentionOp::inferReturnTypes(context, loc, forwardAdaptor,
                                           forward)))
    return failure();
  if (adaptor.getGradient().getType() != forward.front())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op 'gradient' must have the type of the "
                             "attention's result");
  results.append({adaptor.getQuery().getType(), adaptor.getKey().getType(),
                  adaptor.getValue().getType()});
  return success();
}

// Unfused: the saved probabilities are read for dv and the softmax
// gradient, d(probabilities) is written and read, d(scores) is written and
// read for dq and dk.
int64_t AttentionGradOp::getUnfusedIntermediateElements(bool withDropout) {
  // The probabilities read for v's gradient, the probabilities' gradient
  // written and read with them by the softmax's gradient, the scores'
  // gradient written and read twice (for q and k); dropout's gradient
  // reads the incoming gradient and the mask and writes its own: 2.5 more.
  int64_t scores =
      getAttentionScoreElements(getQuery().getType(), getKey().getType());
  return withDropout ? scores * 19 / 2 : 7 * scores;
}

// Recomputing the scores and three more products of the same size.
int64_t AttentionGradOp::getFlopCount() {
  auto query = getQuery().getType();
  return getAttentionScoreElements(query, getKey().getType()) *
         (8 * query.getDimSize(3) + 8);
}

//===----------------------------------------------------------------------===//
// CrossEntropyGradOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyGradOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &results) {
  SmallVector<Type> forward;
  CrossEntropyOp::Adaptor forwardAdaptor(
      ValueRange{adaptor.getLogits(), adaptor.getLabels()});
  if (failed(CrossEntropyOp::inferReturnTypes(context, loc, forwardAdaptor,
                                              forward)))
    return failure();
  if (adaptor.getGradient().getType() != forward.front())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op 'gradient' must be the scalar loss's type");
  // An empty batch has no element to divide by its count (its loss is NaN).
  auto logits = cast<ShapedType>(adaptor.getLogits().getType());
  if (adaptor.getCount() < (logits.getNumElements() == 0 ? 0 : 1))
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op 'count' must be positive");
  Value normalizer = adaptor.getNormalizer();
  if (!normalizer != !adaptor.getShard())
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op takes 'normalizer' and 'shard' together");
  auto labels = cast<ShapedType>(adaptor.getLabels().getType());
  if (normalizer &&
      normalizer.getType() != labels.clone(logits.getElementType()))
    return emitOptionalError(loc, "'", getOperationName(),
                             "' op 'normalizer' must have the labels' shape "
                             "and the logits' element type");
  results.push_back(adaptor.getLogits().getType());
  return success();
}

// softmax and the subtraction, scaled.
int64_t CrossEntropyGradOp::getFlopCount() {
  return 6 * numElements(getLogits().getType());
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

// Two moment updates, the bias corrections, the square root and the step.
int64_t AdamWUpdateOp::getFlopCount() { return 12 * numElements(getType(0)); }

int64_t SgdUpdateOp::getFlopCount() { return 4 * numElements(getType(0)); }

SmallVector<Value> AdamWUpdateOp::getParameterState() {
  return {getFirstMoment(), getSecondMoment()};
}

SmallVector<Value> SgdUpdateOp::getParameterState() {
  return {getMomentumBuffer()};
}
