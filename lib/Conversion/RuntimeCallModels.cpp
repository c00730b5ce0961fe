//===- RuntimeCallModels.cpp - the libparcrt call of each op --------------===//
//
// An op `d.name` calls `parcrt_name`, which must be an entry point of the
// runtime's op table (runtime/include/parcrt/Ops.def) taking as many
// descriptors as the op has operands and results; the functions below
// append the attributes of ops that have some, in the order it documents.
//
//===----------------------------------------------------------------------===//

#include "parc/Conversion/RuntimeCallOpInterface.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ParcOps.h"
#include "parcrt/parcrt.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::parc;

#include "parc/Conversion/RuntimeCallOpInterface.cpp.inc"

using Ints = SmallVectorImpl<int64_t>;
using Floats = SmallVectorImpl<double>;

/// Attributes of ops that have none.
static LogicalResult appendAttributes(Operation *, ArrayRef<StringRef>, Ints &,
                                      Floats &) {
  return success();
}

static LogicalResult appendAttributes(GeluOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.push_back(op.getApproximation() == GeluApproximation::Tanh);
  return success();
}

static LogicalResult appendAttributes(CompareOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  static_assert(static_cast<int>(ComparisonPredicate::Eq) == PARCRT_EQ &&
                    static_cast<int>(ComparisonPredicate::Ne) == PARCRT_NE &&
                    static_cast<int>(ComparisonPredicate::Lt) == PARCRT_LT &&
                    static_cast<int>(ComparisonPredicate::Le) == PARCRT_LE &&
                    static_cast<int>(ComparisonPredicate::Gt) == PARCRT_GT &&
                    static_cast<int>(ComparisonPredicate::Ge) == PARCRT_GE,
                "ComparisonPredicate numbers the relations as parcrt.h does");
  ints.push_back(static_cast<int64_t>(op.getPredicate()));
  return success();
}

static LogicalResult appendAttributes(MatmulOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.append(
      {op.getTransposeLhs(), op.getTransposeRhs(), op.getContractBatch()});
  llvm::append_range(ints, op.getMatrixDims());
  return success();
}

static LogicalResult appendAttributes(SoftmaxOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.push_back(op.getAxis());
  return success();
}

static LogicalResult appendAttributes(LayerNormOp op, ArrayRef<StringRef>,
                                      Ints &, Floats &floats) {
  floats.push_back(op.getEpsilon().convertToDouble());
  return success();
}

static LogicalResult appendAttributes(RmsNormOp op, ArrayRef<StringRef>, Ints &,
                                      Floats &floats) {
  floats.push_back(op.getEpsilon().convertToDouble());
  return success();
}

static LogicalResult appendAttributes(EmbeddingOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.push_back(op.getShard() != nullptr);
  return success();
}

static LogicalResult appendAttributes(TakeOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.push_back(op.getShard() != nullptr);
  return success();
}

static LogicalResult appendAttributes(TransposeOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  llvm::append_range(ints, op.getPermutation());
  return success();
}

template <typename ReduceOpT>
static std::enable_if_t<llvm::is_one_of<ReduceOpT, ReduceSumOp, ReduceMeanOp,
                                        ReduceMaxOp, ReduceLogSumExpOp>::value,
                        LogicalResult>
appendAttributes(ReduceOpT op, ArrayRef<StringRef>, Ints &ints, Floats &) {
  ints.push_back(op.getAxes().size());
  llvm::append_range(ints, op.getAxes());
  ints.push_back(op.getKeepdims());
  return success();
}

static LogicalResult appendAttributes(ConcatOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.append({static_cast<int64_t>(op.getInputs().size()),
               static_cast<int64_t>(op.getAxis())});
  return success();
}

static LogicalResult appendAttributes(SliceOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  llvm::append_range(ints, op.getOffsets());
  llvm::append_range(ints, op.getStrides());
  return success();
}

static LogicalResult appendAttributes(ConstantOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &floats) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitOpError("only dense constants can be compiled");
  // A splat is one value; the runtime fills the tensor with it.
  int64_t count = dense.isSplat() ? 1 : dense.getNumElements();
  ints.push_back(count);
  if (isa<FloatType>(dense.getElementType())) {
    for (APFloat value :
         llvm::make_range(dense.value_begin<APFloat>(),
                          dense.value_begin<APFloat>() + count)) {
      bool losesInfo;
      value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      floats.push_back(value.convertToDouble());
    }
  } else {
    for (APInt value : llvm::make_range(dense.value_begin<APInt>(),
                                        dense.value_begin<APInt>() + count))
      floats.push_back(static_cast<double>(value.getSExtValue()));
  }
  return success();
}

static LogicalResult appendAttributes(AttentionOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &floats) {
  ints.push_back(op.getCausal());
  ints.push_back(op.getMask() != nullptr);
  floats.push_back(op.getScale().convertToDouble());
  return success();
}

/// strides (2), padding (4), dilations (2), groups: parcrt/Ops.def's order.
template <typename ConvolutionOpT,
          std::enable_if_t<
              llvm::is_one_of<ConvolutionOpT, Conv2dOp, Conv2dInputGradOp,
                              Conv2dWeightGradOp>::value,
              int> = 0>
static LogicalResult appendAttributes(ConvolutionOpT op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  llvm::append_range(ints, op.getStrides());
  llvm::append_range(ints, op.getPadding());
  llvm::append_range(ints, op.getDilations());
  ints.push_back(static_cast<int64_t>(op.getGroups()));
  return success();
}

/// kernel, strides, padding, dilations (and an average's count_include_pad):
/// parcrt/Ops.def's order.
template <
    typename PoolingOpT,
    std::enable_if_t<llvm::is_one_of<PoolingOpT, MaxPool2dOp, MaxPool2dGradOp,
                                     AvgPool2dOp, AvgPool2dGradOp>::value,
                     int> = 0>
static LogicalResult appendAttributes(PoolingOpT op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  for (ArrayRef<int64_t> values :
       {op.getKernel(), op.getStrides(), op.getPadding(), op.getDilations()})
    llvm::append_range(ints, values);
  if constexpr (llvm::is_one_of<PoolingOpT, AvgPool2dOp,
                                AvgPool2dGradOp>::value)
    ints.push_back(op.getCountIncludePad());
  return success();
}

static LogicalResult appendAttributes(SliceGradOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  llvm::append_range(ints, op.getOffsets());
  llvm::append_range(ints, op.getStrides());
  return success();
}

static LogicalResult appendAttributes(ActivationGradOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  static_assert(
      static_cast<int>(ActivationKind::Relu) == PARCRT_RELU &&
          static_cast<int>(ActivationKind::Sigmoid) == PARCRT_SIGMOID &&
          static_cast<int>(ActivationKind::Silu) == PARCRT_SILU &&
          static_cast<int>(ActivationKind::Tanh) == PARCRT_TANH &&
          static_cast<int>(ActivationKind::GeluErf) == PARCRT_GELU_ERF &&
          static_cast<int>(ActivationKind::GeluTanh) == PARCRT_GELU_TANH,
      "ActivationKind numbers the kinds as parcrt.h does");
  ints.push_back(static_cast<int64_t>(op.getActivation()));
  return success();
}

static LogicalResult appendAttributes(SoftmaxGradOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.push_back(op.getAxis());
  return success();
}

static LogicalResult appendAttributes(LayerNormGradOp op, ArrayRef<StringRef>,
                                      Ints &, Floats &floats) {
  floats.push_back(op.getEpsilon().convertToDouble());
  return success();
}

static LogicalResult appendAttributes(RmsNormGradOp op, ArrayRef<StringRef>,
                                      Ints &, Floats &floats) {
  floats.push_back(op.getEpsilon().convertToDouble());
  return success();
}

static LogicalResult appendAttributes(EmbeddingGradOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &) {
  ints.push_back(op.getShard() != nullptr);
  return success();
}

static LogicalResult appendAttributes(AttentionGradOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &floats) {
  ints.push_back(op.getCausal());
  ints.push_back(op.getMask() != nullptr);
  floats.push_back(op.getScale().convertToDouble());
  return success();
}

static LogicalResult appendAttributes(CrossEntropyGradOp op,
                                      ArrayRef<StringRef>, Ints &ints,
                                      Floats &) {
  ints.push_back(op.getCount());
  ints.push_back(op.getShard() != nullptr);
  return success();
}

static LogicalResult appendAttributes(AdamWUpdateOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &floats) {
  ints.push_back(op.getSkip() != nullptr);
  floats.append({op.getLr().convertToDouble(), op.getBeta1().convertToDouble(),
                 op.getBeta2().convertToDouble(),
                 op.getEpsilon().convertToDouble(),
                 op.getWeightDecay().convertToDouble()});
  return success();
}

static LogicalResult appendAttributes(SgdUpdateOp op, ArrayRef<StringRef>,
                                      Ints &ints, Floats &floats) {
  ints.push_back(op.getSkip() != nullptr);
  floats.append(
      {op.getLr().convertToDouble(), op.getMomentum().convertToDouble()});
  return success();
}

static LogicalResult appendAttributes(ClipCoefficientOp op, ArrayRef<StringRef>,
                                      Ints &, Floats &floats) {
  floats.push_back(op.getMaxNorm().convertToDouble());
  return success();
}

/// The position of mesh axis `axis`.
static LogicalResult appendAxis(Operation *op, StringRef axis,
                                ArrayRef<StringRef> meshAxes, Ints &ints) {
  const StringRef *position = llvm::find(meshAxes, axis);
  if (position == meshAxes.end())
    return op->emitOpError("names axis '") << axis << "' of another mesh";
  ints.push_back(position - meshAxes.begin());
  return success();
}

/// A collective's group: the number of axes, then their mesh positions.
static LogicalResult appendGroup(Operation *op, ArrayAttr axes,
                                 ArrayRef<StringRef> meshAxes, Ints &ints) {
  ints.push_back(axes.size());
  for (StringRef axis : axes.getAsValueRange<StringAttr>())
    if (failed(appendAxis(op, axis, meshAxes, ints)))
      return failure();
  return success();
}

static LogicalResult appendAttributes(dist::AllReduceOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  if (failed(appendGroup(op, op.getAxes(), meshAxes, ints)))
    return failure();
  ints.push_back(op.getReduction() == dist::ReductionKind::Max);
  return success();
}

template <typename DimOpT>
static LogicalResult appendGroupAndDim(DimOpT op, ArrayRef<StringRef> meshAxes,
                                       Ints &ints) {
  if (failed(appendGroup(op, op.getAxes(), meshAxes, ints)))
    return failure();
  ints.push_back(op.getDim());
  return success();
}
static LogicalResult appendAttributes(dist::AllGatherOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  return appendGroupAndDim(op, meshAxes, ints);
}
static LogicalResult appendAttributes(dist::ReduceScatterOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  return appendGroupAndDim(op, meshAxes, ints);
}
static LogicalResult appendAttributes(dist::AllSliceOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  return appendGroupAndDim(op, meshAxes, ints);
}

static LogicalResult appendAttributes(dist::AllToAllOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  if (failed(appendGroup(op, op.getAxes(), meshAxes, ints)))
    return failure();
  ints.append({static_cast<int64_t>(op.getSplitDim()),
               static_cast<int64_t>(op.getConcatDim())});
  return success();
}

static LogicalResult appendAttributes(dist::AxisIndexOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  return appendGroup(op, op.getAxes(), meshAxes, ints);
}

/// ints: [channel, number of axes, then per axis its position and the
/// peer's coordinate].
template <typename PointToPointOpT>
static LogicalResult appendPointToPoint(PointToPointOpT op,
                                        ArrayRef<StringRef> meshAxes,
                                        Ints &ints) {
  ints.append({static_cast<int64_t>(op.getChannel()),
               static_cast<int64_t>(op.getPeer().size())});
  for (auto [axis, coordinate] : llvm::zip_equal(
           op.getAxes().template getAsValueRange<StringAttr>(), op.getPeer())) {
    if (failed(appendAxis(op, axis, meshAxes, ints)))
      return failure();
    ints.push_back(coordinate);
  }
  return success();
}
static LogicalResult appendAttributes(dist::SendOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  return appendPointToPoint(op, meshAxes, ints);
}
static LogicalResult appendAttributes(dist::RecvOp op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &) {
  return appendPointToPoint(op, meshAxes, ints);
}

/// What an entry point takes: its descriptors given its ints, the last
/// `results` of them results.
struct EntryPoint {
  int64_t (*tensors)(const int64_t *ints);
  int64_t results;
};

/// The entry points libparcrt defines, `parcrt_<name>` by name.
static const llvm::StringMap<EntryPoint> &getRuntimeEntryPoints() {
  static const llvm::StringMap<EntryPoint> entryPoints = {
#define PARCRT_COMPUTE_OP(name, tensors, results, kind, call)                  \
  {#name, {[](const int64_t *ints) -> int64_t { return tensors; }, results}},
#define PARCRT_COLLECTIVE_OP(name, call)                                       \
  {#name, {[](const int64_t *) -> int64_t { return 2; }, 1}},
#define PARCRT_POINT_TO_POINT_OP(name, what, call)                             \
  {#name, {[](const int64_t *) -> int64_t { return 1; }, -1}},
#include "parcrt/Ops.def"
#undef PARCRT_COMPUTE_OP
#undef PARCRT_COLLECTIVE_OP
#undef PARCRT_POINT_TO_POINT_OP
  };
  return entryPoints;
}

namespace {
template <typename OpT>
struct RuntimeCallModel
    : public RuntimeCallOpInterface::ExternalModel<RuntimeCallModel<OpT>, OpT> {
  FailureOr<StringRef> getRuntimeCall(Operation *op,
                                      ArrayRef<StringRef> meshAxes, Ints &ints,
                                      Floats &floats) const {
    if (failed(appendAttributes(cast<OpT>(op), meshAxes, ints, floats)))
      return failure();
    StringRef name = op->getName().stripDialect();
    auto entry = getRuntimeEntryPoints().find(name);
    if (entry == getRuntimeEntryPoints().end())
      return op->emitOpError("has no entry point parcrt_")
             << name << " in the runtime's op table (parcrt/Ops.def)";
    int64_t tensors = op->getNumOperands() + op->getNumResults();
    int64_t expected = entry->second.tensors(ints.data());
    // A send's tensor is its operand, a recv's its result: either.
    int64_t results =
        entry->second.results < 0 ? op->getNumResults() : entry->second.results;
    if (expected != tensors || results != op->getNumResults())
      return op->emitOpError("has ")
             << op->getNumOperands() << " operands and " << op->getNumResults()
             << " results, but parcrt_" << name << " takes "
             << expected - results << " and " << results
             << " with these attributes (parcrt/Ops.def)";
    // Uniqued in the context, so the name outlives this call.
    return StringAttr::get(op->getContext(), "parcrt_" + name).getValue();
  }
};

template <typename... OpTs> void attach(MLIRContext *context) {
  (OpTs::template attachInterface<RuntimeCallModel<OpTs>>(*context), ...);
}
} // namespace

void mlir::parc::registerRuntimeCallModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, ParcDialect *) {
    attach<AddOp, SubOp, MulOp, DivOp, NegOp, ExpOp, LogOp, TanhOp, ReluOp,
           SigmoidOp, SiluOp, GeluOp, PowOp, SqrtOp, ErfOp, SelectOp, CompareOp,
           CastOp, MatmulOp, SoftmaxOp, LayerNormOp, RmsNormOp, EmbeddingOp,
           TakeOp, ReshapeOp, TransposeOp, ReduceSumOp, ReduceMeanOp,
           ReduceMaxOp, ReduceLogSumExpOp, ConcatOp, SliceOp, ConstantOp,
           AttentionOp, CrossEntropyOp, BroadcastToOp, SliceGradOp,
           ActivationGradOp, SoftmaxGradOp, LayerNormGradOp, RmsNormGradOp,
           EmbeddingGradOp, AttentionGradOp, CrossEntropyGradOp, AdamWUpdateOp,
           SgdUpdateOp, ClipCoefficientOp, Conv2dOp, Conv2dInputGradOp,
           Conv2dWeightGradOp, MaxPool2dOp, MaxPool2dGradOp, AvgPool2dOp,
           AvgPool2dGradOp>(context);
  });
  registry.addExtension(+[](MLIRContext *context, dist::DistDialect *) {
    attach<dist::AllReduceOp, dist::AllGatherOp, dist::ReduceScatterOp,
           dist::AllToAllOp, dist::AllSliceOp, dist::AxisIndexOp, dist::SendOp,
           dist::RecvOp>(context);
  });
}
