//===- LayoutKernels.cpp - data movement: reshape to embedding lookups ----===//

#include "Kernels.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::interp;

static LogicalResult reshapeKernel(ReshapeOp, ArrayRef<const Tensor *> operands,
                                   MutableArrayRef<Tensor> results) {
  results[0].values = operands[0]->values;
  return success();
}

static LogicalResult transposeKernel(TransposeOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &in = *operands[0];
  ArrayRef<int64_t> permutation = op.getPermutation();
  SmallVector<int64_t> inStrides = in.getStrides();
  forEachIndex(results[0].shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    int64_t source = 0;
    for (auto [i, dim] : llvm::zip_equal(index, permutation))
      source += i * inStrides[dim];
    results[0].values[linear] = in.values[source];
  });
  return success();
}

static LogicalResult concatKernel(ConcatOp op,
                                  ArrayRef<const Tensor *> operands,
                                  MutableArrayRef<Tensor> results) {
  Tensor &out = results[0];
  int64_t axis = op.getAxis();
  int64_t start = 0;
  for (const Tensor *in : operands) {
    forEachIndex(in->shape, [&](ArrayRef<int64_t> index, int64_t linear) {
      SmallVector<int64_t> target(index);
      target[axis] += start;
      out.at(target) = in->values[linear];
    });
    start += in->shape[axis];
  }
  return success();
}

static LogicalResult sliceKernel(SliceOp op, ArrayRef<const Tensor *> operands,
                                 MutableArrayRef<Tensor> results) {
  ArrayRef<int64_t> offsets = op.getOffsets(), strides = op.getStrides();
  forEachIndex(results[0].shape, [&](ArrayRef<int64_t> index, int64_t linear) {
    SmallVector<int64_t> source(index.size());
    for (size_t dim = 0; dim < index.size(); ++dim)
      source[dim] = offsets[dim] + index[dim] * strides[dim];
    results[0].values[linear] = operands[0]->at(source);
  });
  return success();
}

static LogicalResult constantKernel(ConstantOp op, ArrayRef<const Tensor *>,
                                    MutableArrayRef<Tensor> results) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitOpError("the reference evaluator reads dense constants "
                          "only");
  std::vector<double> &values = results[0].values;
  if (isa<FloatType>(dense.getElementType())) {
    for (auto [out, value] : llvm::zip_equal(values,
                                             dense.getValues<APFloat>())) {
      bool losesInfo = false;
      APFloat wide = value;
      wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                   &losesInfo);
      out = wide.convertToDouble();
    }
  } else {
    for (auto [out, value] : llvm::zip_equal(values,
                                             dense.getValues<APInt>()))
      out = static_cast<double>(value.getSExtValue());
  }
  return success();
}

static LogicalResult embeddingKernel(EmbeddingOp op,
                                     ArrayRef<const Tensor *> operands,
                                     MutableArrayRef<Tensor> results) {
  const Tensor &table = *operands[0], &ids = *operands[1];
  int64_t vocab = table.shape[0], dim = table.shape[1];
  // A table with a shard index holds one block of the vocabulary; ids
  // outside it contribute zero rows (the result is zero-filled).
  bool sliced = operands.size() > 2;
  double offset = sliced ? operands[2]->values[0] * vocab : 0.0;
  for (int64_t n = 0; n < ids.getNumElements(); ++n) {
    double id = ids.values[n] - offset;
    if (sliced && !(id >= 0 && id < vocab))
      continue;
    if (!(id >= 0 && id < vocab))
      return op.emitOpError() << "ids element " << n << " is "
                              << static_cast<int64_t>(id)
                              << ", outside the table's rows [0, " << vocab
                              << ")";
    std::copy_n(&table.values[static_cast<int64_t>(id) * dim], dim,
                &results[0].values[n * dim]);
  }
  return success();
}

static LogicalResult takeKernel(TakeOp op, ArrayRef<const Tensor *> operands,
                                MutableArrayRef<Tensor> results) {
  const Tensor &input = *operands[0], &indices = *operands[1];
  int64_t classes = input.shape.back();
  bool shifted = operands.size() > 2;
  double offset = shifted ? operands[2]->values[0] * classes : 0.0;
  for (int64_t n = 0; n < indices.getNumElements(); ++n) {
    double index = indices.values[n] - offset;
    if (index >= 0 && index < classes)
      results[0].values[n] =
          input.values[n * classes + static_cast<int64_t>(index)];
    else if (!shifted)
      return op.emitOpError() << "indices element " << n << " is "
                              << static_cast<int64_t>(indices.values[n])
                              << ", outside [0, " << classes << ")";
  }
  return success();
}

void mlir::parc::interp::attachLayoutKernels(MLIRContext *context) {
  attachKernel<TakeOp, takeKernel>(context);
  attachKernel<ReshapeOp, reshapeKernel>(context);
  attachKernel<TransposeOp, transposeKernel>(context);
  attachKernel<ConcatOp, concatKernel>(context);
  attachKernel<SliceOp, sliceKernel>(context);
  attachKernel<ConstantOp, constantKernel>(context);
  attachKernel<EmbeddingOp, embeddingKernel>(context);
}
