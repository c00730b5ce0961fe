//===- ParcOps.cpp - shape rules, verifiers and FLOP counts of parc ops ---===//
//
// Result types are computed in inferReturnTypes, which also reports every
// malformed combination of operands: the message names the op, the operand,
// the dimension and the sizes involved.
//
//===----------------------------------------------------------------------===//

#include "parc/IR/ParcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::parc;

namespace {

/// Emits "'<op>' op <message>" at `loc` when inference runs with a location.
template <typename OpT, typename... Args>
LogicalResult shapeError(std::optional<Location> loc, const char *format,
                         Args &&...args) {
  return emitOptionalError(
      loc, "'", OpT::getOperationName(), "' op ",
      llvm::formatv(format, std::forward<Args>(args)...).str());
}

/// The static ranked tensor type of an operand; ODS constraints guarantee it
/// for verified ops, but inference also runs on ops still being parsed.
template <typename OpT>
FailureOr<RankedTensorType> tensorOperand(std::optional<Location> loc,
                                          Value value, StringRef name) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return shapeError<OpT>(loc, "operand '{0}' must be a static-shape tensor",
                           name);
  return type;
}

template <typename OpT>
LogicalResult sameElementType(std::optional<Location> loc,
                              RankedTensorType first, StringRef firstName,
                              RankedTensorType second, StringRef secondName) {
  if (first.getElementType() == second.getElementType())
    return success();
  std::string firstType, secondType;
  llvm::raw_string_ostream(firstType) << first.getElementType();
  llvm::raw_string_ostream(secondType) << second.getElementType();
  return shapeError<OpT>(loc,
                         "element type of '{0}' ({1}) differs from '{2}' ({3})",
                         firstName, firstType, secondName, secondType);
}

/// numpy broadcasting: shapes align at their last dimension; a dimension of
/// size 1 stretches to the other size.
template <typename OpT>
FailureOr<SmallVector<int64_t>>
broadcastShapes(std::optional<Location> loc, ArrayRef<int64_t> lhs,
                StringRef lhsName, ArrayRef<int64_t> rhs, StringRef rhsName) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // i counts from the last dimension.
    int64_t lhsDim = i < lhs.size() ? lhs[lhs.size() - 1 - i] : 1;
    int64_t rhsDim = i < rhs.size() ? rhs[rhs.size() - 1 - i] : 1;
    if (lhsDim != rhsDim && lhsDim != 1 && rhsDim != 1)
      return shapeError<OpT>(
          loc,
          "cannot broadcast '{0}' dimension {1} (size {2}) against '{3}' "
          "dimension {4} (size {5})",
          lhsName, lhs.size() - 1 - i, lhsDim, rhsName, rhs.size() - 1 - i,
          rhsDim);
    result[rank - 1 - i] = lhsDim == 1 ? rhsDim : lhsDim;
  }
  return result;
}

/// Checks `axis` against `rank`; negative axes are not accepted so that every
/// axis in the IR has one spelling.
template <typename OpT>
LogicalResult checkAxis(std::optional<Location> loc, int64_t axis, int64_t rank,
                        StringRef what) {
  if (axis < 0 || axis >= rank)
    return shapeError<OpT>(loc, "{0} {1} is out of range for rank {2}", what,
                           axis, rank);
  return success();
}

int64_t numElements(Type type) {
  return cast<ShapedType>(type).getNumElements();
}

} // namespace

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> lhs =
      tensorOperand<MatmulOp>(loc, adaptor.getLhs(), "lhs");
  FailureOr<RankedTensorType> rhs =
      tensorOperand<MatmulOp>(loc, adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs))
    return failure();
  if (failed(sameElementType<MatmulOp>(loc, *lhs, "lhs", *rhs, "rhs")))
    return failure();
  ArrayRef<int64_t> dims = adaptor.getMatrixDims();
  if (dims.size() != 3 || llvm::any_of(dims, [](int64_t n) { return n < 1; }))
    return shapeError<MatmulOp>(
        loc,
        "matrix_dims must be three counts >= 1 (rows, contracting, "
        "columns), got [{0:$[, ]}]",
        llvm::make_range(dims.begin(), dims.end()));
  int64_t rows = dims[0], contracting = dims[1], columns = dims[2];
  for (auto [type, name, needed] :
       {std::tuple(*lhs, "lhs", rows + contracting),
        std::tuple(*rhs, "rhs", contracting + columns)})
    if (type.getRank() < needed)
      return shapeError<MatmulOp>(loc,
                                  "operand '{0}' must have rank >= {1}, "
                                  "got rank {2}",
                                  name, needed, type.getRank());

  ArrayRef<int64_t> lhsShape = lhs->getShape(), rhsShape = rhs->getShape();
  OperandGroups lhsGroups = getOperandGroups(lhsShape.size(), rows, contracting,
                                             adaptor.getTransposeLhs());
  OperandGroups rhsGroups = getOperandGroups(
      rhsShape.size(), contracting, columns, adaptor.getTransposeRhs());
  for (int64_t i = 0; i < contracting; ++i) {
    int64_t lhsDim = lhsGroups.secondStart + i,
            rhsDim = rhsGroups.firstStart + i;
    if (lhsShape[lhsDim] != rhsShape[rhsDim])
      return shapeError<MatmulOp>(
          loc,
          "contracting dimensions differ: 'lhs' dimension {0} has size {1} "
          "but 'rhs' dimension {2} has size {3}",
          lhsDim, lhsShape[lhsDim], rhsDim, rhsShape[rhsDim]);
  }
  ArrayRef<int64_t> lhsBatch = lhsShape.take_front(lhsGroups.batchRank),
                    rhsBatch = rhsShape.take_front(rhsGroups.batchRank);
  SmallVector<int64_t> shape;
  if (adaptor.getContractBatch()) {
    if (lhsBatch.empty() || lhsBatch != rhsBatch) {
      std::string lhsType, rhsType;
      llvm::raw_string_ostream(lhsType) << *lhs;
      llvm::raw_string_ostream(rhsType) << *rhs;
      return shapeError<MatmulOp>(
          loc,
          "contract_batch needs operands with the same batch dimensions "
          "(at least one), got {0} and {1}",
          lhsType, rhsType);
    }
  } else {
    FailureOr<SmallVector<int64_t>> batch =
        broadcastShapes<MatmulOp>(loc, lhsBatch, "lhs", rhsBatch, "rhs");
    if (failed(batch))
      return failure();
    shape = std::move(*batch);
  }
  llvm::append_range(shape, lhsShape.slice(lhsGroups.firstStart, rows));
  llvm::append_range(shape, rhsShape.slice(rhsGroups.secondStart, columns));
  results.push_back(RankedTensorType::get(shape, lhs->getElementType()));
  return success();
}

int64_t MatmulOp::getFlopCount() {
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  OperandGroups groups = getLhsGroups();
  int64_t products = 1;
  for (int64_t size :
       lhs.slice(groups.secondStart, getMatrixGroups().contracting))
    products *= size;
  if (getContractBatch())
    for (int64_t size : lhs.take_front(groups.batchRank))
      products *= size;
  return 2 * products * numElements(getType());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult
inferBroadcastResult(std::optional<Location> loc, typename OpT::Adaptor adaptor,
                     SmallVectorImpl<Type> &results, Type resultElement = {}) {
  FailureOr<RankedTensorType> lhs =
      tensorOperand<OpT>(loc, adaptor.getLhs(), "lhs");
  FailureOr<RankedTensorType> rhs =
      tensorOperand<OpT>(loc, adaptor.getRhs(), "rhs");
  if (failed(lhs) || failed(rhs) ||
      failed(sameElementType<OpT>(loc, *lhs, "lhs", *rhs, "rhs")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes<OpT>(loc, lhs->getShape(), "lhs", rhs->getShape(), "rhs");
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(
      *shape, resultElement ? resultElement : lhs->getElementType()));
  return success();
}

#define PARC_BROADCAST_INFERENCE(OP)                                           \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &results) {                                        \
    return inferBroadcastResult<OP>(loc, adaptor, results);                    \
  }
PARC_BROADCAST_INFERENCE(AddOp)
PARC_BROADCAST_INFERENCE(SubOp)
PARC_BROADCAST_INFERENCE(MulOp)
PARC_BROADCAST_INFERENCE(DivOp)
PARC_BROADCAST_INFERENCE(PowOp)
#undef PARC_BROADCAST_INFERENCE

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  return inferBroadcastResult<CompareOp>(loc, adaptor, results,
                                         IntegerType::get(context, 32));
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> condition =
      tensorOperand<SelectOp>(loc, adaptor.getCondition(), "condition");
  FailureOr<RankedTensorType> lhs =
      tensorOperand<SelectOp>(loc, adaptor.getLhs(), "lhs");
  FailureOr<RankedTensorType> rhs =
      tensorOperand<SelectOp>(loc, adaptor.getRhs(), "rhs");
  if (failed(condition) || failed(lhs) || failed(rhs) ||
      failed(sameElementType<SelectOp>(loc, *lhs, "lhs", *rhs, "rhs")))
    return failure();
  FailureOr<SmallVector<int64_t>> values = broadcastShapes<SelectOp>(
      loc, lhs->getShape(), "lhs", rhs->getShape(), "rhs");
  if (failed(values))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes<SelectOp>(
      loc, condition->getShape(), "condition", *values, "lhs and rhs");
  if (failed(shape))
    return failure();
  results.push_back(RankedTensorType::get(*shape, lhs->getElementType()));
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("result shape differs from the input's");
  return success();
}

// A float to a wider float (bf16/f16 to f32) is exact, so linear: mixed
// precision's gradients pass it pending and are reduced in f32.
bool CastOp::sumsPartials() {
  auto from = dyn_cast<FloatType>(getInput().getType().getElementType());
  auto to = dyn_cast<FloatType>(getType().getElementType());
  if (!from || !to || from == to)
    return false;
  // Every value of `from`, subnormals included, is a value of `to`.
  using llvm::APFloat;
  const llvm::fltSemantics &src = from.getFloatSemantics(),
                           &dst = to.getFloatSemantics();
  int srcPrecision = APFloat::semanticsPrecision(src),
      dstPrecision = APFloat::semanticsPrecision(dst);
  return dstPrecision >= srcPrecision &&
         APFloat::semanticsMaxExponent(dst) >=
             APFloat::semanticsMaxExponent(src) &&
         APFloat::semanticsMinExponent(dst) - dstPrecision <=
             APFloat::semanticsMinExponent(src) - srcPrecision;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return checkAxis<SoftmaxOp>(getLoc(), getAxis(), getType().getRank(), "axis");
}

// max, subtract, exp, sum, divide.
int64_t SoftmaxOp::getFlopCount() { return 5 * numElements(getType()); }

/// Checks that a per-feature parameter (gamma, beta) is a vector as long as
/// the input's last dimension.
template <typename OpT>
static LogicalResult checkFeatureVector(std::optional<Location> loc,
                                        RankedTensorType input, Value parameter,
                                        StringRef name) {
  FailureOr<RankedTensorType> type = tensorOperand<OpT>(loc, parameter, name);
  if (failed(type) ||
      failed(sameElementType<OpT>(loc, input, "input", *type, name)))
    return failure();
  int64_t features = input.getShape().back();
  if (type->getRank() != 1 || type->getDimSize(0) != features)
    return shapeError<OpT>(loc,
                           "operand '{0}' must have shape [{1}] (the last "
                           "dimension of 'input'), got rank {2} with "
                           "dimension 0 of size {3}",
                           name, features, type->getRank(),
                           type->getRank() ? type->getDimSize(0) : 0);
  return success();
}

template <typename OpT>
static FailureOr<RankedTensorType> normalizedInput(std::optional<Location> loc,
                                                   Value input) {
  FailureOr<RankedTensorType> type = tensorOperand<OpT>(loc, input, "input");
  if (succeeded(type) && type->getRank() == 0)
    return shapeError<OpT>(loc, "operand 'input' must have rank >= 1");
  return type;
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input =
      normalizedInput<LayerNormOp>(loc, adaptor.getInput());
  if (failed(input) ||
      failed(checkFeatureVector<LayerNormOp>(loc, *input, adaptor.getGamma(),
                                             "gamma")) ||
      failed(checkFeatureVector<LayerNormOp>(loc, *input, adaptor.getBeta(),
                                             "beta")))
    return failure();
  results.push_back(*input);
  return success();
}

// mean, centre, square, variance sum, scale by rstd, gamma, beta (+ rsqrt).
int64_t LayerNormOp::getFlopCount() { return 7 * numElements(getType()); }

/// batch_norm's and batch_norm_grad's operands: `input` [N, C, ...] whose
/// batch splits into `groups` equal groups of more than one value per
/// channel (an unbiased variance needs two), and [C] vectors of its element
/// type.
template <typename OpT>
static FailureOr<RankedTensorType>
checkBatchNorm(std::optional<Location> loc, Value input,
               ArrayRef<std::pair<Value, StringRef>> channelVectors,
               IntegerAttr groupsAttr) {
  // Inference runs before the parser fills in default values.
  int64_t groups = groupsAttr ? groupsAttr.getInt() : 1;
  FailureOr<RankedTensorType> type = tensorOperand<OpT>(loc, input, "input");
  if (failed(type))
    return failure();
  if (type->getRank() < 2)
    return shapeError<OpT>(loc,
                           "operand 'input' must have rank >= 2 "
                           "([batch, channels, ...]), got rank {0}",
                           type->getRank());
  int64_t batch = type->getDimSize(0), channels = type->getDimSize(1);
  if (groups < 1 || batch % groups != 0)
    return shapeError<OpT>(loc,
                           "'groups' ({0}) must be positive and divide the "
                           "batch ({1})",
                           groups, batch);
  if (type->getNumElements() / groups / std::max<int64_t>(channels, 1) < 2)
    return shapeError<OpT>(loc,
                           "each of the {0} groups has fewer than 2 values "
                           "per channel",
                           groups);
  for (auto [vector, name] : channelVectors) {
    FailureOr<RankedTensorType> vectorType =
        tensorOperand<OpT>(loc, vector, name);
    if (failed(vectorType) ||
        failed(sameElementType<OpT>(loc, *type, "input", *vectorType, name)))
      return failure();
    if (vectorType->getRank() != 1 || vectorType->getDimSize(0) != channels)
      return shapeError<OpT>(loc,
                             "operand '{0}' must have shape [{1}] (the "
                             "channels, dimension 1 of 'input')",
                             name, channels);
  }
  return type;
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input = checkBatchNorm<BatchNormOp>(
      loc, adaptor.getInput(),
      {{adaptor.getGamma(), "gamma"}, {adaptor.getBeta(), "beta"}},
      adaptor.getGroupsAttr());
  if (failed(input))
    return failure();
  Type channels = adaptor.getGamma().getType();
  results.append({*input, channels, channels});
  return success();
}

// Two reductions, centring, squaring, scaling and shifting per element.
int64_t BatchNormOp::getFlopCount() {
  return 6 * numElements(getResult().getType());
}

LogicalResult
BatchNormGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input = checkBatchNorm<BatchNormGradOp>(
      loc, adaptor.getInput(), {{adaptor.getGamma(), "gamma"}},
      adaptor.getGroupsAttr());
  if (failed(input))
    return failure();
  if (adaptor.getGradient().getType() != *input)
    return shapeError<BatchNormGradOp>(
        loc, "operand 'gradient' must have the type of 'input'");
  Type channels = adaptor.getGamma().getType();
  results.append({*input, channels, channels});
  return success();
}

// The statistics again (4 per element), then 12 for the gradients.
int64_t BatchNormGradOp::getFlopCount() {
  return 16 * numElements(getInput().getType());
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input =
      normalizedInput<RmsNormOp>(loc, adaptor.getInput());
  if (failed(input) || failed(checkFeatureVector<RmsNormOp>(
                           loc, *input, adaptor.getGamma(), "gamma")))
    return failure();
  results.push_back(*input);
  return success();
}

// square, sum, scale by rstd, gamma.
int64_t RmsNormOp::getFlopCount() { return 4 * numElements(getType()); }

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> table =
      tensorOperand<EmbeddingOp>(loc, adaptor.getTable(), "table");
  FailureOr<RankedTensorType> ids =
      tensorOperand<EmbeddingOp>(loc, adaptor.getIds(), "ids");
  if (failed(table) || failed(ids))
    return failure();
  if (table->getRank() != 2)
    return shapeError<EmbeddingOp>(
        loc, "operand 'table' must be [vocab, dim] (rank 2), got rank {0}",
        table->getRank());
  if (!ids->getElementType().isSignlessInteger())
    return shapeError<EmbeddingOp>(loc, "operand 'ids' must hold integers");
  SmallVector<int64_t> shape(ids->getShape());
  shape.push_back(table->getDimSize(1));
  results.push_back(RankedTensorType::get(shape, table->getElementType()));
  return success();
}

int64_t EmbeddingOp::getFlopCount() { return 0; }

LogicalResult TakeOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input =
      tensorOperand<TakeOp>(loc, adaptor.getInput(), "input");
  FailureOr<RankedTensorType> indices =
      tensorOperand<TakeOp>(loc, adaptor.getIndices(), "indices");
  if (failed(input) || failed(indices))
    return failure();
  if (input->getRank() < 1)
    return shapeError<TakeOp>(loc, "operand 'input' must have rank >= 1");
  ArrayRef<int64_t> expected = input->getShape().drop_back();
  if (indices->getShape() != expected)
    return shapeError<TakeOp>(
        loc, "operand 'indices' must have the shape of 'input' without its "
             "last dimension");
  results.push_back(RankedTensorType::get(expected, input->getElementType()));
  return success();
}

int64_t TakeOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// Layout: reshape, transpose, concat, slice
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType(), result = getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("result element type differs from 'input'");
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot reshape 'input' of "
                         << input.getNumElements() << " elements into "
                         << result.getNumElements() << " elements";
  return success();
}

int64_t ReshapeOp::getFlopCount() { return 0; }

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input =
      tensorOperand<TransposeOp>(loc, adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  int64_t rank = input->getRank();
  if (static_cast<int64_t>(perm.size()) != rank)
    return shapeError<TransposeOp>(
        loc, "permutation has {0} entries but 'input' has rank {1}",
        perm.size(), rank);
  SmallVector<bool> seen(rank, false);
  SmallVector<int64_t> shape;
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= rank || seen[dim])
      return shapeError<TransposeOp>(
          loc, "permutation entry {0} is out of range or repeated", dim);
    seen[dim] = true;
    shape.push_back(input->getDimSize(dim));
  }
  results.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

int64_t TransposeOp::getFlopCount() { return 0; }

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &results) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return shapeError<ConcatOp>(loc, "needs at least one input");
  FailureOr<RankedTensorType> first =
      tensorOperand<ConcatOp>(loc, inputs.front(), "inputs");
  if (failed(first))
    return failure();
  int64_t axis = adaptor.getAxis();
  if (failed(checkAxis<ConcatOp>(loc, axis, first->getRank(), "axis")))
    return failure();
  SmallVector<int64_t> shape(first->getShape());
  for (auto [index, value] : llvm::enumerate(inputs.drop_front())) {
    FailureOr<RankedTensorType> type =
        tensorOperand<ConcatOp>(loc, value, "inputs");
    if (failed(type) || failed(sameElementType<ConcatOp>(
                            loc, *first, "inputs[0]", *type,
                            "inputs[" + std::to_string(index + 1) + "]")))
      return failure();
    if (type->getRank() != first->getRank())
      return shapeError<ConcatOp>(loc,
                                  "inputs[{0}] has rank {1}, inputs[0] "
                                  "has rank {2}",
                                  index + 1, type->getRank(), first->getRank());
    for (int64_t dim = 0; dim < first->getRank(); ++dim) {
      if (dim == axis)
        continue;
      if (type->getDimSize(dim) != first->getDimSize(dim))
        return shapeError<ConcatOp>(
            loc, "inputs[{0}] dimension {1} has size {2}, inputs[0] has {3}",
            index + 1, dim, type->getDimSize(dim), first->getDimSize(dim));
    }
    shape[axis] += type->getDimSize(axis);
  }
  results.push_back(RankedTensorType::get(shape, first->getElementType()));
  return success();
}

int64_t ConcatOp::getFlopCount() { return 0; }

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input =
      tensorOperand<SliceOp>(loc, adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  ArrayRef<int64_t> offsets = adaptor.getOffsets(), sizes = adaptor.getSizes(),
                    strides = adaptor.getStrides();
  int64_t rank = input->getRank();
  for (auto [what, list] :
       {std::pair("offsets", offsets), std::pair("sizes", sizes),
        std::pair("strides", strides)})
    if (static_cast<int64_t>(list.size()) != rank)
      return shapeError<SliceOp>(loc,
                                 "{0} has {1} entries but 'input' has rank {2}",
                                 what, list.size(), rank);
  for (int64_t dim = 0; dim < rank; ++dim) {
    int64_t offset = offsets[dim], size = sizes[dim], stride = strides[dim];
    if (stride < 1 || size < 0 || offset < 0)
      return shapeError<SliceOp>(loc,
                                 "dimension {0}: offset {1}, size {2} and "
                                 "stride {3} must be >= 0, >= 0 and >= 1",
                                 dim, offset, size, stride);
    if (size > 0 && offset + (size - 1) * stride >= input->getDimSize(dim))
      return shapeError<SliceOp>(
          loc,
          "dimension {0}: slice reaches index {1} but 'input' has size {2}",
          dim, offset + (size - 1) * stride, input->getDimSize(dim));
  }
  results.push_back(RankedTensorType::get(sizes, input->getElementType()));
  return success();
}

int64_t SliceOp::getFlopCount() { return 0; }

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename OpT>
static LogicalResult inferReduction(std::optional<Location> loc,
                                    typename OpT::Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> input =
      tensorOperand<OpT>(loc, adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : adaptor.getAxes()) {
    if (failed(checkAxis<OpT>(loc, axis, rank, "axis")))
      return failure();
    if (reduced[axis])
      return shapeError<OpT>(loc, "axis {0} is listed twice", axis);
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    if (!reduced[dim])
      shape.push_back(input->getDimSize(dim));
    else if (adaptor.getKeepdims())
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction<ReduceSumOp>(loc, adaptor, results);
}

LogicalResult ReduceMeanOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &results) {
  return inferReduction<ReduceMeanOp>(loc, adaptor, results);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  return inferReduction<ReduceMaxOp>(loc, adaptor, results);
}

LogicalResult
ReduceLogSumExpOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &results) {
  return inferReduction<ReduceLogSumExpOp>(loc, adaptor, results);
}

int64_t ReduceMaxOp::getFlopCount() {
  return numElements(getInput().getType());
}
// The maximum, then a shifted exponential and a sum per element.
int64_t ReduceLogSumExpOp::getFlopCount() {
  return 4 * numElements(getInput().getType());
}
int64_t ReduceSumOp::getFlopCount() {
  return numElements(getInput().getType());
}
int64_t ReduceMeanOp::getFlopCount() {
  return numElements(getInput().getType());
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> query =
      tensorOperand<AttentionOp>(loc, adaptor.getQuery(), "query");
  FailureOr<RankedTensorType> key =
      tensorOperand<AttentionOp>(loc, adaptor.getKey(), "key");
  FailureOr<RankedTensorType> value =
      tensorOperand<AttentionOp>(loc, adaptor.getValue(), "value");
  if (failed(query) || failed(key) || failed(value))
    return failure();
  for (auto [type, name] : {std::pair(*query, "query"), std::pair(*key, "key"),
                            std::pair(*value, "value")})
    if (type.getRank() != 4)
      return shapeError<AttentionOp>(
          loc,
          "operand '{0}' must be [batch, heads, seq, head_dim], got rank {1}",
          name, type.getRank());
  if (failed(sameElementType<AttentionOp>(loc, *query, "query", *key, "key")) ||
      failed(
          sameElementType<AttentionOp>(loc, *query, "query", *value, "value")))
    return failure();
  // key and query share batch and head_dim; key and value share batch,
  // heads and the key sequence.
  struct DimPair {
    RankedTensorType a;
    const char *aName;
    RankedTensorType b;
    const char *bName;
    int64_t dim;
  };
  for (const DimPair &pair : {DimPair{*key, "key", *query, "query", 0},
                              DimPair{*key, "key", *query, "query", 3},
                              DimPair{*value, "value", *key, "key", 0},
                              DimPair{*value, "value", *key, "key", 1},
                              DimPair{*value, "value", *key, "key", 2}})
    if (pair.a.getDimSize(pair.dim) != pair.b.getDimSize(pair.dim))
      return shapeError<AttentionOp>(
          loc, "'{0}' dimension {1} has size {2} but '{3}' has size {4}",
          pair.aName, pair.dim, pair.a.getDimSize(pair.dim), pair.bName,
          pair.b.getDimSize(pair.dim));
  int64_t heads = query->getDimSize(1), kvHeads = key->getDimSize(1);
  if (kvHeads == 0 ? heads != 0 : heads % kvHeads != 0)
    return shapeError<AttentionOp>(
        loc,
        "the key's {0} heads must divide the query's {1} (grouped-query "
        "attention)",
        kvHeads, heads);
  if (adaptor.getMask()) {
    FailureOr<RankedTensorType> mask =
        tensorOperand<AttentionOp>(loc, adaptor.getMask(), "mask");
    if (failed(mask) || failed(sameElementType<AttentionOp>(
                            loc, *query, "query", *mask, "mask")))
      return failure();
    // [batch or 1, heads or 1, seq or 1, kv_seq].
    SmallVector<int64_t> scores = {query->getDimSize(0), heads,
                                   query->getDimSize(2), key->getDimSize(2)};
    if (mask->getRank() != 4)
      return shapeError<AttentionOp>(
          loc, "'mask' must be [batch, heads, seq, kv_seq], got rank {0}",
          mask->getRank());
    for (int64_t dim = 0; dim < 4; ++dim) {
      int64_t size = mask->getDimSize(dim);
      if (size != scores[dim] && (size != 1 || dim == 3))
        return shapeError<AttentionOp>(
            loc, "'mask' dimension {0} has size {1}; the scores' is {2}{3}",
            dim, size, scores[dim], dim == 3 ? "" : " (or 1 to broadcast)");
    }
  }
  SmallVector<int64_t> shape(query->getShape());
  shape[3] = value->getDimSize(3);
  results.push_back(RankedTensorType::get(shape, query->getElementType()));
  return success();
}

int64_t mlir::parc::getAttentionScoreElements(ShapedType query,
                                              ShapedType key) {
  return query.getDimSize(0) * query.getDimSize(1) * query.getDimSize(2) *
         key.getDimSize(2);
}

// Unfused: q k^T writes the scores, the softmax reads them and writes the
// probabilities, the product with v reads those.
int64_t AttentionOp::getUnfusedIntermediateElements(bool withDropout) {
  // The scores written and read by the softmax, the probabilities written
  // and read by the product with v; dropout reads them and writes its
  // output (read by the product instead) and mask: 2.5 more.
  int64_t scores =
      getAttentionScoreElements(getQuery().getType(), getKey().getType());
  return withDropout ? scores * 13 / 2 : 4 * scores;
}

// Two products of [seq x kv_seq] score matrices plus the softmax over them.
int64_t AttentionOp::getFlopCount() {
  auto query = getQuery().getType();
  int64_t scores = getAttentionScoreElements(query, getKey().getType());
  return scores *
         (2 * query.getDimSize(3) + 2 * getValue().getType().getDimSize(3) + 5);
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> loc,
                                               Adaptor adaptor,
                                               SmallVectorImpl<Type> &results) {
  FailureOr<RankedTensorType> logits =
      tensorOperand<CrossEntropyOp>(loc, adaptor.getLogits(), "logits");
  FailureOr<RankedTensorType> labels =
      tensorOperand<CrossEntropyOp>(loc, adaptor.getLabels(), "labels");
  if (failed(logits) || failed(labels))
    return failure();
  if (logits->getRank() < 1)
    return shapeError<CrossEntropyOp>(loc, "operand 'logits' must have rank "
                                           ">= 1 (the class dimension last)");
  ArrayRef<int64_t> expected = logits->getShape().drop_back();
  if (labels->getRank() != static_cast<int64_t>(expected.size()))
    return shapeError<CrossEntropyOp>(
        loc,
        "operand 'labels' must have rank {0} (that of 'logits' without "
        "its class dimension), got rank {1}",
        expected.size(), labels->getRank());
  for (auto [dim, size] : llvm::enumerate(expected))
    if (labels->getDimSize(dim) != size)
      return shapeError<CrossEntropyOp>(
          loc, "'labels' dimension {0} has size {1} but 'logits' has size {2}",
          dim, labels->getDimSize(dim), size);
  results.push_back(RankedTensorType::get({}, logits->getElementType()));
  return success();
}

// max, subtract, exp, sum per logit.
int64_t CrossEntropyOp::getFlopCount() {
  return 4 * numElements(getLogits().getType());
}

#define GET_OP_CLASSES
#include "parc/IR/ParcOps.cpp.inc"
