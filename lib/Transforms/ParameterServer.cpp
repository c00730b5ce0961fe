//===- ParameterServer.cpp - workers and dedicated servers ----------------===//
//
// A plan with dedicated parameter servers (`"placement": "dedicated"`) is
// laid out and partitioned as the colocated one, ZeRO-1's program, on a mesh
// with one more axis, `ps`, major: coordinate 0 holds the workers, 1 the
// servers, server d owning what data-parallel rank d owns in the colocated
// program (1/dp of every tensor that splits, a replica of one that does
// not). This pass cuts that program into two stage functions:
//
//  - the workers' (stage 0): the forward and backward passes; where the
//    colocated program reduce-scatters a gradient over dp, each worker
//    sends server s its part s (the push), and where it all-gathers an
//    updated parameter, it receives every server's part and joins them
//    (the pull). A gradient that does not split is all-reduced in the
//    colocated program: the worker sends it whole to its own server.
//  - the servers' (stage 1): each receives its part of every gradient from
//    all workers and sums them in worker order (a gradient that does not
//    split arrives from its own worker and is all-reduced among the
//    servers), runs the optimizer update on its part with its part of the
//    optimizer state, and sends the new part to every worker (a whole
//    parameter to its own worker).
//
// The servers' function is what the update needs and nothing else: the
// pushes' sums, the parameters' parts (arguments laid out over dp), the
// optimizer state and what the step computes from them alone (the step
// counter). Channels: one per push and one per pull, so a pair's messages
// never mix. Workers send every gradient before they receive a parameter,
// and sends are buffered, so no rank waits for a message sent after its
// receive.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/ParameterServer.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <array>
#include <functional>
#include <tuple>

namespace mlir::parc {
#define GEN_PASS_DEF_PARAMETERSERVERPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

constexpr StringLiteral kDataParallelAxis = "dp";

/// Whether `op` is a collective over exactly the data-parallel axis.
bool isOverDataParallel(Operation *op) {
  auto communication = dyn_cast<dist::CommunicationOpInterface>(op);
  if (!communication || isa<dist::SendOp, dist::RecvOp>(op))
    return false;
  ArrayAttr axes = communication.getGroupAxes();
  return axes.size() == 1 &&
         cast<StringAttr>(axes[0]).getValue() == kDataParallelAxis;
}

/// A gradient's sum over the data-parallel ranks as the colocated program
/// computes it: a reduce_scatter (the gradient splits over the servers) or
/// an all_reduce (it does not) of a value of the backward pass.
bool isGradientSum(Operation *op) {
  if (!isa<dist::ReduceScatterOp, dist::AllReduceOp>(op) ||
      !isOverDataParallel(op))
    return false;
  Operation *producer = op->getOperand(0).getDefiningOp();
  return producer && getPhase(producer) != Phase::Update;
}

/// The optimizer updates of `func` and the gradient sums they read (through
/// ops of the update phase, such as clipping's), each in program order.
std::pair<SmallVector<Operation *>, SmallVector<Operation *>>
findUpdatesAndPushes(func::FuncOp func) {
  SmallVector<Operation *> updates;
  func.walk([&](OptimizerUpdateOpInterface op) { updates.push_back(op); });
  llvm::SetVector<Operation *> pushes;
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Operation *> stack(updates.begin(), updates.end());
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!seen.insert(op).second)
      continue;
    if (isGradientSum(op)) {
      pushes.insert(op);
      continue;
    }
    if (getPhase(op) != Phase::Update)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        stack.push_back(producer);
  }
  SmallVector<Operation *> ordered = pushes.takeVector();
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return {updates, ordered};
}

/// Removes the ops of `func` whose results are unused and that have no
/// side effects, last first, until none is left.
void eraseDeadOps(func::FuncOp func) {
  bool erased = true;
  while (erased) {
    erased = false;
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().front().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isMemoryEffectFree(op)) {
        op->erase();
        erased = true;
      }
  }
}

void eraseUnusedArguments(func::FuncOp func) {
  llvm::BitVector unused(func.getNumArguments());
  for (BlockArgument argument : func.getArguments())
    if (argument.use_empty())
      unused.set(argument.getArgNumber());
  (void)func.eraseArguments(unused);
}

class ParameterServerSplit {
public:
  ParameterServerSplit(func::FuncOp workers, dist::MeshOp mesh, int64_t dp)
      : workers(workers), mesh(mesh), context(workers.getContext()), dp(dp) {}

  LogicalResult run();

private:
  LogicalResult findUpdates();
  LogicalResult buildServers();
  LogicalResult buildWorkers();

  /// A peer on the other side: its `ps` coordinate and, for a part, its dp
  /// coordinate (else the rank's own).
  std::pair<ArrayAttr, SmallVector<int64_t>>
  peerAt(int64_t side, std::optional<int64_t> dpCoordinate) const;
  /// `whole` (a parameter's layout) with dp added, minor, on `dim`.
  FailureOr<dist::ShardingAttr> getPartSharding(Attribute whole, int64_t dim,
                                                Location loc) const;

  func::FuncOp workers, servers;
  dist::MeshOp mesh;
  MLIRContext *context;
  int64_t dp;
  /// In program order; indices into these are the channels.
  SmallVector<Operation *> pushes;
  SmallVector<Operation *> updates;
};

std::pair<ArrayAttr, SmallVector<int64_t>>
ParameterServerSplit::peerAt(int64_t side,
                             std::optional<int64_t> dpCoordinate) const {
  Builder b(context);
  if (!dpCoordinate)
    return {b.getStrArrayAttr({kServerAxis}), {side}};
  return {b.getStrArrayAttr({kServerAxis, kDataParallelAxis}),
          {side, *dpCoordinate}};
}

FailureOr<dist::ShardingAttr>
ParameterServerSplit::getPartSharding(Attribute wholeAttr, int64_t dim,
                                      Location loc) const {
  auto whole = dyn_cast_or_null<dist::ShardingAttr>(wholeAttr);
  if (!whole || dim >= int64_t(whole.getDims().size()))
    return emitError(loc) << "a parameter's part needs the parameter's "
                             "dist.sharding, with a dimension "
                          << dim;
  Builder b(context);
  SmallVector<Attribute> dims = llvm::to_vector(whole.getDims().getValue());
  SmallVector<Attribute> axes =
      llvm::to_vector(cast<ArrayAttr>(dims[dim]).getValue());
  axes.push_back(b.getStringAttr(kDataParallelAxis));
  dims[dim] = b.getArrayAttr(axes);
  return dist::ShardingAttr::get(context, whole.getMesh(),
                                 b.getArrayAttr(dims), whole.getPartial());
}

LogicalResult ParameterServerSplit::findUpdates() {
  std::tie(updates, pushes) = findUpdatesAndPushes(workers);
  if (updates.empty())
    return workers.emitError("has no optimizer update for the parameter "
                             "servers to run");
  for (Operation *push : pushes)
    if (!cast<ShapedType>(push->getOperand(0).getType()).hasStaticShape())
      return push->emitOpError("sums a gradient of dynamic shape; the "
                               "parameter servers' parts need static ones");
  for (Operation *op : updates) {
    if (cast<OptimizerUpdateOpInterface>(op).getUpdatedParameter().getType() !=
        op->getResult(0).getType())
      return op->emitOpError("updates a parameter of another type than its "
                             "first result; dedicated parameter servers "
                             "need the update's first result to be the new "
                             "parameter");
    for (Operation *user : op->getResult(0).getUsers())
      if (!isa<func::ReturnOp>(user) &&
          !(isa<dist::AllGatherOp>(user) && isOverDataParallel(user)))
        return user->emitOpError("reads an updated parameter part; dedicated "
                                 "parameter servers send the parts to the "
                                 "workers, who only join them");
  }
  return success();
}

LogicalResult ParameterServerSplit::buildServers() {
  OpBuilder builder(workers);
  builder.setInsertionPointAfter(workers);
  servers = cast<func::FuncOp>(builder.clone(*workers));
  servers.setSymName((workers.getSymName() + "_servers").str());
  StringRef meshName = mesh.getSymName();

  // The pushes arrive: a part from every worker, summed in worker order, or
  // a whole gradient from the server's own worker, summed over the servers
  // by the colocated program's all_reduce.
  auto [serverUpdates, serverPushes] = findUpdatesAndPushes(servers);
  for (auto [channel, push] : llvm::enumerate(serverPushes)) {
    builder.setInsertionPoint(push);
    Type type = push->getResult(0).getType();
    auto receive = [&](std::optional<int64_t> worker) -> Value {
      auto [axes, peer] = peerAt(0, worker);
      auto recv = dist::RecvOp::create(builder, push->getLoc(), type, meshName,
                                       axes, peer, channel);
      setPhase(recv, Phase::Update);
      return recv;
    };
    if (isa<dist::AllReduceOp>(push)) {
      push->setOperand(0, receive(std::nullopt));
      continue;
    }
    Value sum = receive(0);
    for (int64_t worker = 1; worker < dp; ++worker) {
      sum = AddOp::create(builder, push->getLoc(), sum, receive(worker));
      setPhase(sum.getDefiningOp(), Phase::Update);
    }
    push->getResult(0).replaceAllUsesWith(sum);
  }

  // The pulls: the new part to every worker, a whole parameter to the
  // server's own. The server returns the part where the workers return the
  // parameter (its all_gather), laid out over dp on the gathered dimension.
  auto ret = cast<func::ReturnOp>(servers.getBody().front().getTerminator());
  llvm::DenseMap<unsigned, int64_t> partDims;
  llvm::DenseSet<Value> updated;
  int64_t firstPullChannel = serverPushes.size();
  for (auto [index, op] : llvm::enumerate(serverUpdates)) {
    Value part = op->getResult(0);
    for (OpResult result : op->getResults())
      updated.insert(result);
    builder.setInsertionPointAfter(op);
    int64_t channel = firstPullChannel + index;
    auto sendTo = [&](std::optional<int64_t> worker) {
      auto [axes, peer] = peerAt(0, worker);
      setPhase(dist::SendOp::create(builder, op->getLoc(), part, meshName,
                                    axes, peer, channel),
               Phase::Update);
    };
    auto gathers = llvm::make_filter_range(part.getUsers(), [](Operation *op) {
      return isa<dist::AllGatherOp>(op);
    });
    if (gathers.empty()) {
      sendTo(std::nullopt);
      continue;
    }
    for (int64_t worker = 0; worker < dp; ++worker)
      sendTo(worker);
    for (Operation *gather : llvm::to_vector(gathers))
      for (OpOperand &use : llvm::make_early_inc_range(
               gather->getResult(0).getUses()))
        if (use.getOwner() == ret) {
          partDims[use.getOperandNumber()] =
              cast<dist::AllGatherOp>(gather).getDim();
          use.set(part);
          updated.insert(part);
        }
  }

  // The servers return the updates' results and what the step computes
  // from their own state alone (the step counter).
  llvm::DenseMap<Value, bool> readsWorkerMemo;
  std::function<bool(Value)> readsWorkers = [&](Value value) -> bool {
    if (auto it = readsWorkerMemo.find(value); it != readsWorkerMemo.end())
      return it->second;
    bool reads;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      auto role = servers.getArgAttrOfType<StringAttr>(
          argument.getArgNumber(), ParcDialect::kRoleAttrName);
      reads = !role || (role.getValue() != "param" &&
                        role.getValue() != "optstate");
    } else if (Operation *op = value.getDefiningOp();
               getPhase(op) != Phase::Update) {
      reads = true;
    } else {
      reads = llvm::any_of(op->getOperands(), readsWorkers);
    }
    readsWorkerMemo[value] = reads;
    return reads;
  };
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    if (!updated.contains(value) && readsWorkers(value))
      continue;
    DictionaryAttr attrs = servers.getResultAttrDict(index);
    if (auto dim = partDims.find(index); dim != partDims.end()) {
      NamedAttrList list(attrs);
      FailureOr<dist::ShardingAttr> part = getPartSharding(
          list.get(dist::DistDialect::kShardingAttrName), dim->second,
          servers.getLoc());
      if (failed(part))
        return failure();
      list.set(dist::DistDialect::kShardingAttrName, *part);
      attrs = list.getDictionary(context);
    }
    results.push_back(value);
    resultAttrs.push_back(attrs);
  }
  OpBuilder atReturn(ret);
  func::ReturnOp::create(atReturn, ret.getLoc(), results);
  ret.erase();
  servers.setType(FunctionType::get(context, servers.getArgumentTypes(),
                                    ValueRange(results).getTypes()));
  servers.setAllResultAttrs(resultAttrs);
  eraseDeadOps(servers);

  // A parameter's part is the server's argument: where the colocated
  // program sliced its replica (all_slice over dp), the server holds only
  // the slice.
  SmallVector<dist::AllSliceOp> slices;
  servers.walk([&](dist::AllSliceOp slice) {
    if (isOverDataParallel(slice) && isa<BlockArgument>(slice.getInput()))
      slices.push_back(slice);
  });
  for (dist::AllSliceOp slice : slices) {
    auto argument = cast<BlockArgument>(slice.getInput());
    if (!argument.hasOneUse())
      return slice.emitOpError("slices a parameter that the servers also "
                               "read whole; dedicated parameter servers "
                               "hold only their part");
    unsigned index = argument.getArgNumber();
    FailureOr<dist::ShardingAttr> part = getPartSharding(
        servers.getArgAttr(index, dist::DistDialect::kShardingAttrName),
        slice.getDim(), slice.getLoc());
    if (failed(part))
      return failure();
    argument.setType(slice.getType());
    servers.setArgAttr(index, dist::DistDialect::kShardingAttrName, *part);
    slice.getResult().replaceAllUsesWith(argument);
    slice.erase();
  }
  eraseUnusedArguments(servers);
  servers.setType(FunctionType::get(context,
                                    servers.getBody().getArgumentTypes(),
                                    servers.getResultTypes()));

  WalkResult leftover = servers.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp>(op) ||
        getPhase(op) == Phase::Update)
      return WalkResult::advance();
    op->emitOpError("of the forward or backward pass is needed by the "
                    "optimizer update, which dedicated parameter servers run "
                    "without the workers' activations");
    return WalkResult::interrupt();
  });
  return failure(leftover.wasInterrupted());
}

LogicalResult ParameterServerSplit::buildWorkers() {
  StringRef meshName = mesh.getSymName();
  OpBuilder builder(workers.getContext());
  // The pushes: every part to its server, or the whole gradient to the
  // worker's own server.
  for (auto [channel, push] : llvm::enumerate(pushes)) {
    builder.setInsertionPoint(push);
    Value gradient = push->getOperand(0);
    auto sendTo = [&](Value value, std::optional<int64_t> server) {
      auto [axes, peer] = peerAt(1, server);
      setPhase(dist::SendOp::create(builder, push->getLoc(), value, meshName,
                                    axes, peer, channel),
               Phase::Backward);
    };
    auto scatter = dyn_cast<dist::ReduceScatterOp>(push);
    if (!scatter) {
      sendTo(gradient, std::nullopt);
      continue;
    }
    auto type = cast<RankedTensorType>(gradient.getType());
    int64_t dim = scatter.getDim(), length = type.getDimSize(dim) / dp;
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    SmallVector<int64_t> sizes = llvm::to_vector(type.getShape());
    sizes[dim] = length;
    for (int64_t server = 0; server < dp; ++server) {
      offsets[dim] = server * length;
      auto part = SliceOp::create(builder, push->getLoc(), gradient, offsets,
                                  sizes, strides);
      setPhase(part, Phase::Backward);
      sendTo(part, server);
    }
  }

  // The pulls: every server's part joined, or the whole parameter from the
  // worker's own server.
  auto ret = cast<func::ReturnOp>(workers.getBody().front().getTerminator());
  int64_t firstPullChannel = pushes.size();
  llvm::DenseSet<Value> stateResults;
  for (auto [index, op] : llvm::enumerate(updates)) {
    for (OpResult result : llvm::drop_begin(op->getResults()))
      stateResults.insert(result);
    int64_t channel = firstPullChannel + index;
    Value part = op->getResult(0);
    auto receive = [&](Type type, std::optional<int64_t> server) -> Value {
      auto [axes, peer] = peerAt(1, server);
      auto recv = dist::RecvOp::create(builder, op->getLoc(), type, meshName,
                                       axes, peer, channel);
      setPhase(recv, Phase::Update);
      return recv;
    };
    for (Operation *user : llvm::to_vector(part.getUsers())) {
      if (auto gather = dyn_cast<dist::AllGatherOp>(user)) {
        builder.setInsertionPoint(gather);
        SmallVector<Value> parts;
        for (int64_t server = 0; server < dp; ++server)
          parts.push_back(receive(part.getType(), server));
        auto joined =
            ConcatOp::create(builder, gather.getLoc(), parts, gather.getDim());
        setPhase(joined, Phase::Update);
        gather.getResult().replaceAllUsesWith(joined.getResult());
      } else {
        builder.setInsertionPoint(ret);
        user->replaceUsesOfWith(part, receive(part.getType(), std::nullopt));
      }
    }
  }

  // The workers return all but the optimizer state, which the servers hold.
  llvm::BitVector dropped(workers.getNumResults());
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    if (stateResults.contains(value))
      dropped.set(index);
  ret->eraseOperands(dropped);
  (void)workers.eraseResults(dropped);
  eraseDeadOps(workers);
  eraseUnusedArguments(workers);
  bool updatesLeft = false;
  workers.walk([&](OptimizerUpdateOpInterface update) {
    updatesLeft = true;
    update->emitOpError("is read by the workers, but dedicated "
                                 "parameter servers run the update");
  });
  return failure(updatesLeft);
}

LogicalResult ParameterServerSplit::run() {
  if (failed(findUpdates()) || failed(buildServers()) ||
      failed(buildWorkers()))
    return failure();
  Builder b(context);
  for (auto [stage, func] :
       llvm::enumerate(std::array<func::FuncOp, 2>{workers, servers})) {
    func->setAttr(kStageAttrName, b.getI64IntegerAttr(stage));
    func->setAttr(kParameterServerAttrName,
                  b.getDictionaryAttr({b.getNamedAttr(
                      "axis", b.getStringAttr(kServerAxis))}));
  }
  return success();
}

struct ParameterServerPass
    : public parc::impl::ParameterServerPassBase<ParameterServerPass> {
  void runOnOperation() override;
};

} // namespace

void ParameterServerPass::runOnOperation() {
  SmallVector<func::FuncOp> marked;
  for (auto func : getOperation().getOps<func::FuncOp>())
    if (func->hasAttr(kParameterServerAttrName) &&
        !func->hasAttr(kStageAttrName))
      marked.push_back(func);
  for (func::FuncOp func : marked) {
    auto meshName = func->getAttrOfType<FlatSymbolRefAttr>("dist.mesh");
    dist::MeshOp mesh = meshName ? dist::lookupMesh(func, meshName) : nullptr;
    std::optional<int64_t> dp =
        mesh ? mesh.getAxisSize(kDataParallelAxis) : std::nullopt;
    std::optional<int64_t> sides =
        mesh ? mesh.getAxisSize(kServerAxis) : std::nullopt;
    if (!func->hasAttr("dist.partitioned") || !dp || sides != 2 ||
        mesh.getAxisNames()[0] != StringAttr::get(&getContext(), kServerAxis)) {
      func.emitError("--parc-parameter-server splits a partitioned function "
                     "on a mesh whose first axis is 'ps' (size 2: workers, "
                     "servers) and that has a 'dp' axis (--parc-apply-plan "
                     "makes it for dedicated parameter servers)");
      return signalPassFailure();
    }
    if (failed(ParameterServerSplit(func, mesh, *dp).run()))
      return signalPassFailure();
  }
}
