//===- LocalSgd.cpp - a replica's step, local to its rank -----------------===//
//
// After partitioning, a value summed over the batch (the loss, every
// gradient, batch statistics) is a pending sum over the replica axis that
// an all_reduce settles. In a replica's own step it is instead this rank's
// estimate of that sum from its shard: its part times the axis size (the
// shard's mean where the model divides by the whole batch). With averaging
// every step this is ordinary data parallelism for SGD, whose update is
// linear in the gradient. The loss and other metrics a step returns stay
// all-reduced: they report the whole batch (the mean over the replicas).
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/LocalSgd.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::parc {
#define GEN_PASS_DEF_LOCALSGDPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

DictionaryAttr mlir::parc::getLocalSgdAttr(MLIRContext *context,
                                           const LocalSgdConfig &config) {
  Builder b(context);
  return b.getDictionaryAttr(
      {b.getNamedAttr("axis", b.getStringAttr(config.axis)),
       b.getNamedAttr("sync_every", b.getI64IntegerAttr(config.syncEvery)),
       b.getNamedAttr("average_optimizer_state",
                      b.getBoolAttr(config.averageOptimizerState))});
}

FailureOr<std::optional<LocalSgdConfig>>
mlir::parc::getLocalSgd(func::FuncOp func) {
  Attribute attr = func->getAttr(kLocalSgdAttrName);
  if (!attr)
    return std::optional<LocalSgdConfig>();
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto axis = dict ? dict.getAs<StringAttr>("axis") : StringAttr();
  auto every = dict ? dict.getAs<IntegerAttr>("sync_every") : IntegerAttr();
  auto state =
      dict ? dict.getAs<BoolAttr>("average_optimizer_state") : BoolAttr();
  if (!axis || !every || every.getInt() < 1 || !state)
    return func.emitError()
           << kLocalSgdAttrName
           << " must be {axis = \"dp\", sync_every = N (>= 1), "
              "average_optimizer_state = true|false}";
  return std::optional<LocalSgdConfig>(
      LocalSgdConfig{axis.getValue().str(), every.getInt(), state.getValue()});
}

namespace {

struct LocalSgdPass : public parc::impl::LocalSgdPassBase<LocalSgdPass> {
  void runOnOperation() override;
};

} // namespace

void LocalSgdPass::runOnOperation() {
  func::FuncOp func = getOperation();
  FailureOr<std::optional<LocalSgdConfig>> config = getLocalSgd(func);
  if (failed(config))
    return signalPassFailure();
  if (!*config)
    return;
  auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
  dist::MeshOp mesh = meshName ? dist::lookupMesh(func, meshName) : nullptr;
  if (!mesh || !func->hasAttr("dist.partitioned")) {
    func.emitError("local SGD rewrites a partitioned program; run "
                   "--parc-partition first");
    return signalPassFailure();
  }
  StringRef axis = (*config)->axis;
  std::optional<int64_t> replicas = mesh.getAxisSize(axis);
  if (!replicas) {
    func.emitError() << "local SGD's axis '" << axis << "' is not an axis of @"
                     << mesh.getSymName();
    return signalPassFailure();
  }
  // Results named like no argument are metrics, reported for the batch.
  llvm::StringSet<> argumentNames;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name =
            func.getArgAttrOfType<StringAttr>(i, ParcDialect::kNameAttrName))
      argumentNames.insert(name.getValue());
  SmallVector<std::string> resultNames = getResultNames(func);
  auto isMetricUse = [&](OpOperand &use) {
    return isa<func::ReturnOp>(use.getOwner()) &&
           !argumentNames.contains(resultNames[use.getOperandNumber()]);
  };

  SmallVector<dist::AllReduceOp> sums;
  WalkResult walk = func.walk([&](dist::CommunicationOpInterface op) {
    auto axes = op.getGroupAxes().getAsValueRange<StringAttr>();
    if (!llvm::is_contained(axes, axis))
      return WalkResult::advance();
    auto allReduce = dyn_cast<dist::AllReduceOp>(op.getOperation());
    if (allReduce && allReduce.getReduction() == dist::ReductionKind::Sum)
      sums.push_back(allReduce);
    else if (!isa<dist::AllSliceOp, dist::AxisIndexOp>(op.getOperation())) {
      op->emitError() << "a replica of local SGD trains on its own, so '"
                      << op->getName() << "' over '" << axis
                      << "' has no meaning in its step";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();

  for (dist::AllReduceOp sum : sums) {
    SmallVector<Attribute> rest;
    for (Attribute other : sum.getAxes())
      if (cast<StringAttr>(other).getValue() != axis)
        rest.push_back(other);
    OpBuilder b(sum);
    Location loc = sum.getLoc();
    Value part = sum.getInput();
    if (!rest.empty()) {
      auto inner = dist::AllReduceOp::create(
          b, loc, part.getType(), part, sum.getMeshAttr(), b.getArrayAttr(rest),
          sum.getReductionAttr());
      inner->setDiscardableAttrs(sum->getDiscardableAttrDictionary());
      part = inner;
    }
    auto type = cast<RankedTensorType>(part.getType());
    if (!isa<FloatType>(type.getElementType())) {
      sum.emitError() << "local SGD scales a replica's part of a sum over '"
                      << axis << "', which needs floats, not "
                      << type.getElementType();
      return signalPassFailure();
    }
    auto scalarType = RankedTensorType::get({}, type.getElementType());
    auto count = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            scalarType, b.getFloatAttr(type.getElementType(), *replicas)));
    auto estimate = MulOp::create(b, loc, part, count);
    for (Operation *created : {count.getOperation(), estimate.getOperation()})
      created->setDiscardableAttrs(sum->getDiscardableAttrDictionary());
    sum.getResult().replaceUsesWithIf(
        estimate, [&](OpOperand &use) { return !isMetricUse(use); });
    if (sum.getResult().use_empty())
      sum.erase();
  }
}
