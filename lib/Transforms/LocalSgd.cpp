//===- LocalSgd.cpp - a replica's step, local to its rank -----------------===//
//
// A local SGD train step is written at one replica's batch and partitioned
// with nothing split over the replica axis, so each rank of that axis runs
// a whole replica. What makes the replicas differ is their data: each
// input and label becomes replica r's block of a batch the axis size times
// larger (its sharding gains the axis on dimension 0, so the launcher loads
// or draws that block). The scalar metrics a step returns (the loss) are
// averaged over the replicas, so they report the whole batch. The
// executables average the replicas' state every `sync_every` steps.
//
//===----------------------------------------------------------------------===//
#include "parc/Transforms/LocalSgd.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/Passes.h"
#include "parc/Transforms/TensorSharding.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

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

double LocalSgdAveraging::getTrafficBytes() const {
  return 2.0 * double(replicas - 1) / double(replicas) * double(bytes);
}

void LocalSgdAveraging::print(llvm::raw_ostream &os) const {
  os << "local SGD averaging over '" << axis << "' (" << replicas
     << " replicas) every " << syncEvery << " steps: " << tensors
     << " all_reduces, " << bytes << " bytes, traffic "
     << llvm::format("%.0f", getTrafficBytes()) << " bytes per rank (per step "
     << llvm::format("%.0f", getTrafficBytes() / double(syncEvery)) << ")\n";
}

FailureOr<std::optional<LocalSgdAveraging>>
mlir::parc::getLocalSgdAveraging(func::FuncOp func) {
  FailureOr<std::optional<LocalSgdConfig>> config = getLocalSgd(func);
  if (failed(config))
    return failure();
  if (!*config)
    return std::optional<LocalSgdAveraging>();
  auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
  dist::MeshOp mesh = meshName ? dist::lookupMesh(func, meshName) : nullptr;
  std::optional<int64_t> replicas =
      mesh ? mesh.getAxisSize((*config)->axis) : std::nullopt;
  if (!replicas)
    return func.emitError("local SGD's axis is not an axis of its mesh");
  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return failure();
  LocalSgdAveraging averaging{(*config)->axis, *replicas, (*config)->syncEvery};
  for (const ModelArgument &argument : *arguments)
    if (isAveragedByLocalSgd(argument, (*config)->averageOptimizerState)) {
      ++averaging.tensors;
      averaging.bytes += getTensorBytes(argument.type);
    }
  return std::optional<LocalSgdAveraging>(averaging);
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
  MLIRContext *context = func.getContext();
  StringAttr axis = StringAttr::get(context, (*config)->axis);
  std::optional<int64_t> replicas = mesh.getAxisSize(axis);
  if (!replicas) {
    func.emitError() << "local SGD's axis '" << axis.getValue()
                     << "' is not an axis of @" << mesh.getSymName();
    return signalPassFailure();
  }
  WalkResult walk = func.walk([&](dist::CommunicationOpInterface op) {
    if (!llvm::is_contained(op.getGroupAxes(), axis))
      return WalkResult::advance();
    op->emitError() << "a replica of local SGD trains on its own, but this "
                       "collective is over '"
                    << axis.getValue()
                    << "' (is a value of the step sharded over it?)";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();

  FailureOr<SmallVector<ModelArgument>> arguments = readModelArguments(func);
  if (failed(arguments))
    return signalPassFailure();
  llvm::StringSet<> argumentNames;
  for (const ModelArgument &argument : *arguments) {
    argumentNames.insert(argument.name);
    if (argument.role != ArgumentRole::Input &&
        argument.role != ArgumentRole::Label)
      continue;
    if (argument.type.getRank() == 0) {
      func.emitError() << "local SGD gives each replica its block of the "
                          "batch along dimension 0, but '"
                       << argument.name << "' is a scalar";
      return signalPassFailure();
    }
    auto sharding = func.getArgAttrOfType<dist::ShardingAttr>(
        argument.index, dist::DistDialect::kShardingAttrName);
    TensorSharding layout =
        sharding ? TensorSharding::fromAttr(sharding)
                 : TensorSharding::replicated(argument.type.getRank());
    layout.dims[0].insert(layout.dims[0].begin(), axis);
    func.setArgAttr(argument.index, dist::DistDialect::kShardingAttrName,
                    layout.toAttr(context, meshName));
  }

  // The metrics: scalar float results named like no argument.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<std::string> resultNames = getResultNames(func);
  OpBuilder b(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || type.getRank() != 0 ||
        !isa<FloatType>(type.getElementType()) ||
        argumentNames.contains(resultNames[operand.getOperandNumber()]))
      continue;
    Location loc = operand.get().getLoc();
    auto sum = dist::AllReduceOp::create(
        b, loc, type, operand.get(), meshName, b.getArrayAttr({axis}),
        dist::ReductionKindAttr::get(context, dist::ReductionKind::Sum));
    auto count = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            type, b.getFloatAttr(type.getElementType(), *replicas)));
    auto mean = DivOp::create(b, loc, sum, count);
    for (Operation *created :
         {sum.getOperation(), count.getOperation(), mean.getOperation()})
      setPhase(created, Phase::Update);
    operand.set(mean);
  }
}
