//===- LayoutChains.cpp - exported head splits as transposes of factors ---===//
//
// Exporters move attention heads with reshape -> transpose -> reshape
// chains whose middle tensor merges dimensions of different meaning:
// nn.MultiheadAttention turns [seq, batch, hidden] into [seq, batch * heads,
// head_dim], transposes that to [batch * heads, seq, head_dim] and
// reshapes it to [batch, heads, seq, head_dim]. A sharding of the heads is
// no block of `batch * heads`, so propagation cannot carry it through. The
// same chain written over the factors both reshapes share, here reshape to
// [seq, batch, heads, head_dim] and transpose [1, 2, 0, 3], moves the same
// elements and keeps every factor a dimension of its own. Consecutive
// transposes (the keys' transpose for the score product, undone by the
// attention pattern) are composed first.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/OnnxImporter.h"

#include "parc/IR/ParcOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::parc;

/// The common factors of two shapes of one element count: the sizes such
/// that every dimension of each is a product of consecutive factors (size-1
/// dimensions have none), with how many factors each dimension of `from`
/// and of `to` has. Fails when two dimensions overlap without nesting.
static LogicalResult commonFactors(ArrayRef<int64_t> from, ArrayRef<int64_t> to,
                                   SmallVectorImpl<int64_t> &factors,
                                   SmallVectorImpl<int64_t> &fromCounts,
                                   SmallVectorImpl<int64_t> &toCounts) {
  fromCounts.assign(from.size(), 0);
  toCounts.assign(to.size(), 0);
  int64_t i = -1, j = -1, a = 1, b = 1;
  while (true) {
    while (a == 1 && ++i < static_cast<int64_t>(from.size()))
      a = from[i];
    while (b == 1 && ++j < static_cast<int64_t>(to.size()))
      b = to[j];
    if (a == 1 && b == 1)
      return success();
    if (a <= 1 || b <= 1)
      return failure();
    int64_t factor = a % b == 0 ? b : b % a == 0 ? a : 0;
    if (factor == 0)
      return failure();
    factors.push_back(factor);
    ++fromCounts[i];
    ++toCounts[j];
    a /= factor;
    b /= factor;
  }
}

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// Rewrites `result = reshape(transpose(reshape(x)))` over the factors of
/// its shapes when the transposed tensor merges factors, erasing the chain
/// (the walk has visited the inner reshape already).
static void refactor(ReshapeOp result, OpBuilder &builder) {
  auto transpose = result.getInput().getDefiningOp<TransposeOp>();
  auto inner =
      transpose ? transpose.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
  if (!inner || !transpose->hasOneUse() || !inner->hasOneUse())
    return;
  Value x = inner.getInput();
  SmallVector<int64_t> factors, inputCounts, mergedCounts;
  if (failed(commonFactors(shapeOf(x), shapeOf(inner), factors, inputCounts,
                           mergedCounts)) ||
      llvm::all_of(mergedCounts, [](int64_t count) { return count <= 1; }))
    return;
  // The factors in the transposed order, then grouped as the result.
  SmallVector<int64_t> firstFactor(mergedCounts.size(), 0);
  for (size_t dim = 1; dim < mergedCounts.size(); ++dim)
    firstFactor[dim] = firstFactor[dim - 1] + mergedCounts[dim - 1];
  SmallVector<int64_t> permutation, permuted;
  for (int64_t dim : transpose.getPermutation())
    for (int64_t k = 0; k < mergedCounts[dim]; ++k) {
      permutation.push_back(firstFactor[dim] + k);
      permuted.push_back(factors[firstFactor[dim] + k]);
    }
  SmallVector<int64_t> again, permutedCounts, resultCounts;
  if (failed(commonFactors(permuted, shapeOf(result), again, permutedCounts,
                           resultCounts)) ||
      again != permuted)
    return;
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  builder.setInsertionPoint(result);
  Location loc = result.getLoc();
  Value split = x;
  if (shapeOf(x) != ArrayRef<int64_t>(factors))
    split = ReshapeOp::create(builder, loc,
                              RankedTensorType::get(factors, element), x);
  Value moved = split;
  if (!llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())))
    moved = TransposeOp::create(builder, loc,
                                RankedTensorType::get(permuted, element), split,
                                permutation);
  result.replaceAllUsesWith(
      shapeOf(moved) == shapeOf(result)
          ? moved
          : ReshapeOp::create(builder, loc, result.getType(), moved)
                .getResult());
  result.erase();
  transpose.erase();
  inner.erase();
}

/// transpose(transpose(x, inner), outer) as one transpose of x; erases the
/// two (the walk visits neither again).
static void composeTransposes(TransposeOp outer, OpBuilder &builder) {
  auto inner = outer.getInput().getDefiningOp<TransposeOp>();
  if (!inner || !inner->hasOneUse())
    return;
  SmallVector<int64_t> permutation;
  for (int64_t dim : outer.getPermutation())
    permutation.push_back(inner.getPermutation()[dim]);
  builder.setInsertionPoint(outer);
  outer.replaceAllUsesWith(
      llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size()))
          ? inner.getInput()
          : TransposeOp::create(builder, outer.getLoc(), outer.getType(),
                                inner.getInput(), permutation)
                .getResult());
  outer.erase();
  inner.erase();
}

void mlir::parc::refactorLayoutChains(ModuleOp module) {
  OpBuilder builder(module.getContext());
  SmallVector<TransposeOp> transposes;
  module.walk([&](TransposeOp transpose) { transposes.push_back(transpose); });
  for (TransposeOp transpose : transposes)
    composeTransposes(transpose, builder);
  SmallVector<ReshapeOp> reshapes;
  module.walk([&](ReshapeOp reshape) { reshapes.push_back(reshape); });
  for (ReshapeOp reshape : reshapes)
    refactor(reshape, builder);
}
