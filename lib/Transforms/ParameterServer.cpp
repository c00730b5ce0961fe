//===- ParameterServer.cpp - workers and dedicated servers ----------------===//
//
// A plan with dedicated parameter servers (`"placement": "dedicated"`) is
// laid out and partitioned as the colocated one, ZeRO-1's program, on a mesh
// with one more axis, `ps`, major: coordinate 0 holds the workers, 1 the
// servers, server d owning what data-parallel rank d owns in the colocated
// program (1/dp of every tensor that splits, a replica of one that does
// not). This pass cuts that program into two stage functions:
//
//  - the workers' (stage 0): the forward and backward passes; of each
//    gradient the colocated program reduce-scatters over dp, a worker sends
//    server s part s as soon as it has computed the gradient (the push),
//    and where the colocated program all-gathers an updated parameter, it
//    receives every server's part and joins them (the pull). A gradient that
//    does not split is all-reduced in the colocated program: the worker sends
//    it whole to its own server (the one at its dp coordinate).
//  - the servers' (stage 1): each receives its part of every gradient from
//    all workers and sums them in worker order (a gradient that does not
//    split arrives from its own workers and is all-reduced among the
//    servers), runs the optimizer update on its part with its part of the
//    optimizer state, and sends the new part to every worker (a whole
//    parameter to its own workers).
//
// The servers' function is what the update needs and nothing else: the
// pushes' sums, the parameters' parts (arguments laid out over dp), the
// optimizer state and what the step computes from them alone (the step
// counter). Channels: one per push and one per pull, so a pair's messages
// never mix. A worker posts its pushes in the order it computes the
// gradients and then its pulls; a server posts its receives first, in that
// same order, and its sends last, in the pulls' order. Every pair of ranks
// thus posts its messages in one order, which NCCL needs (a send there
// waits for its receive, and messages match in posting order whatever
// their channel); MPI's buffered sends need less.
//
// Fewer servers than workers (`"servers": k` dividing dp = n): server s owns
// what colocated ranks s n/k to (s + 1) n/k - 1 own, 1/k of every tensor
// that splits. The stages run on meshes of their own with the same axes
// (parc::StagedMeshes numbers their ranks): the workers' dp axis splits into
// (dp, dpr), @mesh_workers [ps = 2, dp = k, dpr = n/k, ...], so that a
// worker's dp coordinate names its server; the servers' mesh is
// @mesh_servers [ps = 2, dp = k, dpr = 1, ...]. Every peer is then a static
// coordinate: a worker's own server is its dp with dpr 0, and a server's own
// workers are its dp with each dpr. The servers' function is the colocated
// update on parts n/k times as long.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/ParameterServer.h"

#include "dist/IR/DistOps.h"
#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcAttrs.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

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
/// With fewer servers than workers, the workers' dp axis splits into
/// (dp, dpr): dp the server a worker belongs to, dpr the worker among that
/// server's.
constexpr StringLiteral kWorkerWithinServerAxis = "dpr";

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

/// The optimizer updates of `func` in program order, and the gradient sums
/// they read (through ops of the update phase, such as clipping's) in the
/// order the backward pass computes the gradients: the order the workers
/// push them in.
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
  llvm::stable_sort(ordered, [](Operation *a, Operation *b) {
    return a->getOperand(0).getDefiningOp()->isBeforeInBlock(
        b->getOperand(0).getDefiningOp());
  });
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

/// What the workers receive back: a result of the step computed from the
/// updates (a new parameter, or its bf16 copy under mixed precision), as
/// parts the colocated program all-gathers over dp on `dim`, or whole.
struct Pull {
  unsigned resultIndex;
  std::optional<int64_t> dim;
};

class ParameterServerSplit {
public:
  ParameterServerSplit(func::FuncOp workers, dist::MeshOp mesh, int64_t dp,
                       int64_t serverCount)
      : workers(workers), workerMesh(mesh), serverMesh(mesh),
        context(workers.getContext()), dp(dp), serverCount(serverCount) {}

  LogicalResult run();

private:
  LogicalResult analyze();
  /// Fewer servers than workers: the stages' meshes of their own (see the
  /// file comment).
  void createMeshes();
  LogicalResult buildServers();
  /// A server's part is `partsPerServer` of the colocated program's: its
  /// values that hold parts grow on the dimensions split over dp.
  LogicalResult widenServerParts();
  LogicalResult buildWorkers();
  /// The workers' dp axis becomes (dp, dpr) on their mesh.
  void splitWorkersDataParallelAxis();

  bool hasFewerServers() const { return serverCount < dp; }
  /// The peer on side `side` (0 workers, 1 servers): data-parallel rank
  /// `rank` of that side, or absent, the rank's own server (a worker's) or
  /// its worker `ownWorker` (a server's; with one worker per server, 0).
  std::pair<ArrayAttr, SmallVector<int64_t>>
  peerAt(int64_t side, std::optional<int64_t> rank,
         int64_t ownWorker = 0) const;
  /// The mesh of side `side` (0 workers, 1 servers).
  StringRef getMeshName(int64_t side) const {
    dist::MeshOp mesh = side ? serverMesh : workerMesh;
    return mesh.getSymName();
  }
  /// `type` of a colocated part as a server's part: `partsPerServer` times
  /// as long on `dim`.
  Type widenPart(Type type, int64_t dim) const;
  /// `whole` (a parameter's layout) with dp added, minor, on `dim`.
  FailureOr<dist::ShardingAttr> getPartSharding(Attribute whole, int64_t dim,
                                                Location loc) const;
  /// The channel of push `index` and of pull `index`.
  int64_t getPushChannel(size_t index) const { return index; }
  int64_t getPullChannel(size_t index) const { return pushes.size() + index; }

  func::FuncOp workers, servers;
  /// One mesh for both unless the servers are fewer.
  dist::MeshOp workerMesh, serverMesh;
  MLIRContext *context;
  int64_t dp, serverCount;
  int64_t partsPerServer() const { return dp / serverCount; }
  /// The colocated program's mesh, which createMeshes replaces.
  std::string colocatedMeshName;
  /// With fewer servers: each pushed gradient's sum on the servers, built
  /// at a server's width, with the colocated part's type its readers have
  /// until widenServerParts.
  llvm::DenseMap<Value, Type> colocatedTypes;
  /// In the order the backward pass computes the gradients.
  SmallVector<Operation *> pushes;
  /// In result order.
  SmallVector<Pull> pulls;
  /// The results that are optimizer state (named like an `optstate`
  /// argument): the servers keep them.
  llvm::BitVector stateResults;
};

std::pair<ArrayAttr, SmallVector<int64_t>>
ParameterServerSplit::peerAt(int64_t side, std::optional<int64_t> rank,
                             int64_t ownWorker) const {
  Builder b(context);
  if (!hasFewerServers()) {
    if (!rank)
      return {b.getStrArrayAttr({kServerAxis}), {side}};
    return {b.getStrArrayAttr({kServerAxis, kDataParallelAxis}), {side, *rank}};
  }
  // Worker w is (dp, dpr) = (w / r, w % r), server s is (s, 0).
  int64_t perServer = partsPerServer();
  if (!rank)
    return {b.getStrArrayAttr({kServerAxis, kWorkerWithinServerAxis}),
            {side, side ? 0 : ownWorker}};
  return {
      b.getStrArrayAttr(
          {kServerAxis, kDataParallelAxis, kWorkerWithinServerAxis}),
      {side, side ? *rank : *rank / perServer, side ? 0 : *rank % perServer}};
}

Type ParameterServerSplit::widenPart(Type type, int64_t dim) const {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape = llvm::to_vector(tensor.getShape());
  shape[dim] *= partsPerServer();
  return tensor.clone(shape);
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
  return dist::ShardingAttr::get(context, whole.getMesh(), b.getArrayAttr(dims),
                                 whole.getPartial());
}

LogicalResult ParameterServerSplit::analyze() {
  if (!workers.getBody().hasOneBlock() ||
      workers.getBody()
          .front()
          .walk([&](Operation *op) {
            return op->getNumRegions() ? WalkResult::interrupt()
                                       : WalkResult::advance();
          })
          .wasInterrupted())
    return workers.emitError("must be one block without nested regions, as "
                             "--parc-partition writes a step");
  SmallVector<Operation *> updates;
  std::tie(updates, pushes) = findUpdatesAndPushes(workers);
  if (updates.empty())
    return workers.emitError("has no optimizer update for the parameter "
                             "servers to run");
  for (Operation *push : pushes)
    if (!cast<ShapedType>(push->getOperand(0).getType()).hasStaticShape())
      return push->emitOpError("sums a gradient of dynamic shape; the "
                               "parameter servers' parts need static ones");

  // Values of the update phase computed from an update's results.
  llvm::DenseMap<Value, bool> memo;
  std::function<bool(Value)> fromUpdates = [&](Value value) -> bool {
    Operation *op = value.getDefiningOp();
    if (!op || getPhase(op) != Phase::Update)
      return false;
    if (auto it = memo.find(value); it != memo.end())
      return it->second;
    bool from = isa<OptimizerUpdateOpInterface>(op) ||
                llvm::any_of(op->getOperands(), fromUpdates);
    memo[value] = from;
    return from;
  };
  llvm::StringSet<> stateNames;
  for (unsigned index = 0; index < workers.getNumArguments(); ++index) {
    auto role =
        workers.getArgAttrOfType<StringAttr>(index, ParcDialect::kRoleAttrName);
    auto name =
        workers.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
    if (role && name && role.getValue() == "optstate")
      stateNames.insert(name.getValue());
  }
  auto ret = cast<func::ReturnOp>(workers.getBody().front().getTerminator());
  stateResults.resize(ret.getNumOperands());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    auto name = workers.getResultAttrOfType<StringAttr>(
        index, ParcDialect::kNameAttrName);
    if (name && stateNames.contains(name.getValue())) {
      stateResults.set(index);
      continue;
    }
    auto gather = value.getDefiningOp<dist::AllGatherOp>();
    if (gather && isOverDataParallel(gather) && fromUpdates(gather.getInput()))
      pulls.push_back({static_cast<unsigned>(index), gather.getDim()});
    else if (fromUpdates(value))
      pulls.push_back({static_cast<unsigned>(index), std::nullopt});
  }
  // A new parameter's only readers are what sends it back and the return.
  for (Operation *op : updates)
    for (OpResult result : op->getResults())
      for (Operation *user : result.getUsers())
        if (getPhase(user) != Phase::Update && !isa<func::ReturnOp>(user) &&
            !isa<dist::AllGatherOp>(user))
          return user->emitOpError(
              "reads an updated parameter part; dedicated parameter servers "
              "send the parts to the workers, who only join them");
  return success();
}

LogicalResult ParameterServerSplit::buildServers() {
  OpBuilder builder(workers);
  builder.setInsertionPointAfter(workers);
  servers = cast<func::FuncOp>(builder.clone(*workers));
  servers.setSymName((workers.getSymName() + "_servers").str());
  StringRef meshName = getMeshName(0);

  // The pushes arrive: a part from every worker, summed in worker order, or
  // a whole gradient from each of the server's own workers, summed over the
  // servers by the colocated program's all_reduce.
  SmallVector<Operation *> serverPushes = findUpdatesAndPushes(servers).second;
  Block &body = servers.getBody().front();
  builder.setInsertionPointToStart(&body);
  for (size_t index = 0; index < serverPushes.size(); ++index) {
    Operation *push = serverPushes[index];
    Type type = push->getResult(0).getType();
    if (auto scatter = dyn_cast<dist::ReduceScatterOp>(push);
        scatter && hasFewerServers())
      type = widenPart(type, scatter.getDim());
    auto receive = [&](std::optional<int64_t> worker,
                       int64_t ownWorker) -> Value {
      auto [axes, peer] = peerAt(0, worker, ownWorker);
      auto recv = dist::RecvOp::create(builder, push->getLoc(), type, meshName,
                                       axes, peer, getPushChannel(index));
      setPhase(recv, Phase::Update);
      return recv;
    };
    // Summed as the parts arrive: one part's buffer at a time.
    auto sumOf = [&](int64_t count, auto &&receiveOne) {
      Value sum = receiveOne(0);
      for (int64_t from = 1; from < count; ++from) {
        sum = AddOp::create(builder, push->getLoc(), sum, receiveOne(from));
        setPhase(sum.getDefiningOp(), Phase::Update);
      }
      return sum;
    };
    if (isa<dist::AllReduceOp>(push)) {
      // From the server's own workers, summed over the servers where the
      // colocated program sums it.
      push->setOperand(0, sumOf(partsPerServer(), [&](int64_t own) {
                         return receive(std::nullopt, own);
                       }));
      continue;
    }
    Value sum = sumOf(dp, [&](int64_t worker) { return receive(worker, 0); });
    if (hasFewerServers())
      colocatedTypes[sum] = push->getResult(0).getType();
    push->getResult(0).replaceAllUsesWith(sum);
  }

  // The pulls: each part to every worker, a whole value to the server's own
  // worker. The server returns the part where the workers return the whole.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  builder.setInsertionPoint(ret);
  for (size_t index = 0; index < pulls.size(); ++index) {
    const Pull &pull = pulls[index];
    Value value = ret.getOperand(pull.resultIndex);
    if (pull.dim)
      value = value.getDefiningOp<dist::AllGatherOp>().getInput();
    auto sendTo = [&](std::optional<int64_t> worker, int64_t ownWorker) {
      auto [axes, peer] = peerAt(0, worker, ownWorker);
      setPhase(dist::SendOp::create(builder, value.getLoc(), value, meshName,
                                    axes, peer, getPullChannel(index)),
               Phase::Update);
    };
    if (!pull.dim) {
      for (int64_t own = 0; own < partsPerServer(); ++own)
        sendTo(std::nullopt, own);
      continue;
    }
    for (int64_t worker = 0; worker < dp; ++worker)
      sendTo(worker, 0);
    ret->setOperand(pull.resultIndex, value);
  }
  servers.setType(FunctionType::get(context, servers.getArgumentTypes(),
                                    ret.getOperandTypes()));

  // The servers keep their state: each result named like one of their
  // arguments, laid out as they hold it. Results that read the workers'
  // values go first, then the arguments nothing reads, then the results
  // that no argument of the servers is named like (a bf16 copy of a
  // parameter whose f32 master the servers update).
  llvm::DenseMap<Value, bool> memo;
  std::function<bool(Value)> readsWorkers = [&](Value value) -> bool {
    if (auto it = memo.find(value); it != memo.end())
      return it->second;
    bool reads;
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      auto role = servers.getArgAttrOfType<StringAttr>(
          argument.getArgNumber(), ParcDialect::kRoleAttrName);
      reads = !role ||
              (role.getValue() != "param" && role.getValue() != "optstate");
    } else if (Operation *op = value.getDefiningOp();
               getPhase(op) != Phase::Update) {
      reads = true;
    } else {
      reads = llvm::any_of(op->getOperands(), readsWorkers);
    }
    memo[value] = reads;
    return reads;
  };
  llvm::BitVector dropped(servers.getNumResults());
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    if (readsWorkers(value))
      dropped.set(index);
  for (const Pull &pull : pulls)
    if (pull.dim) {
      FailureOr<dist::ShardingAttr> part = getPartSharding(
          servers.getResultAttr(pull.resultIndex,
                                dist::DistDialect::kShardingAttrName),
          *pull.dim, servers.getLoc());
      if (failed(part))
        return failure();
      servers.setResultAttr(pull.resultIndex,
                            dist::DistDialect::kShardingAttrName, *part);
    }
  auto dropResults = [&]() {
    ret->eraseOperands(dropped);
    (void)servers.eraseResults(dropped);
    eraseDeadOps(servers);
  };
  dropResults();

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
  servers.setType(FunctionType::get(
      context, servers.getBody().getArgumentTypes(), servers.getResultTypes()));
  llvm::StringSet<> argumentNames;
  for (unsigned index = 0; index < servers.getNumArguments(); ++index)
    if (auto name = servers.getArgAttrOfType<StringAttr>(
            index, ParcDialect::kNameAttrName))
      argumentNames.insert(name.getValue());
  dropped = llvm::BitVector(servers.getNumResults());
  for (unsigned index = 0; index < servers.getNumResults(); ++index) {
    auto name = servers.getResultAttrOfType<StringAttr>(
        index, ParcDialect::kNameAttrName);
    if (!name || !argumentNames.contains(name.getValue()))
      dropped.set(index);
  }
  dropResults();

  // An f32 master starts as the workers' parameter it copies
  // (parc.init_from): the server, which does not hold that parameter,
  // carries its init (by default a parameter's normal(0, 0.02), any other
  // argument's normal(0, 1), as the runtime draws them).
  llvm::StringMap<InitAttr> workerInits;
  for (unsigned index = 0; index < workers.getNumArguments(); ++index) {
    auto name =
        workers.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
    auto init =
        workers.getArgAttrOfType<InitAttr>(index, ParcDialect::kInitAttrName);
    auto role =
        workers.getArgAttrOfType<StringAttr>(index, ParcDialect::kRoleAttrName);
    double deviation = role && role.getValue() == "param" ? 0.02 : 1.0;
    if (name)
      workerInits[name.getValue()] =
          init ? init
               : InitAttr::get(context, InitDistribution::Normal, APFloat(0.0),
                               APFloat(deviation));
  }
  for (unsigned index = 0; index < servers.getNumArguments(); ++index) {
    auto source = servers.getArgAttrOfType<StringAttr>(
        index, ParcDialect::kInitFromAttrName);
    if (source && !argumentNames.contains(source.getValue()) &&
        workerInits.count(source.getValue()))
      servers.setArgAttr(index, ParcDialect::kInitAttrName,
                         workerInits.lookup(source.getValue()));
  }

  WalkResult leftover = servers.walk([&](Operation *op) {
    if (isa<func::FuncOp, func::ReturnOp>(op) || getPhase(op) == Phase::Update)
      return WalkResult::advance();
    op->emitOpError("of the forward or backward pass is needed by the "
                    "optimizer update, which dedicated parameter servers run "
                    "without the workers' activations");
    return WalkResult::interrupt();
  });
  return failure(leftover.wasInterrupted());
}

/// Replaces every reference to `from` in `func` by `to`.
static void replaceMesh(func::FuncOp func, StringRef from, StringRef to) {
  AttrTypeReplacer replacer;
  MLIRContext *context = func.getContext();
  replacer.addReplacement(
      [&](FlatSymbolRefAttr ref) -> std::optional<Attribute> {
        if (ref.getValue() != from)
          return std::nullopt;
        return FlatSymbolRefAttr::get(context, to);
      });
  replacer.recursivelyReplaceElementsIn(func, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/false);
}

void ParameterServerSplit::createMeshes() {
  Builder b(context);
  SmallVector<StringRef> names;
  SmallVector<int64_t> workerSizes, serverSizes;
  for (auto [name, size] :
       llvm::zip_equal(workerMesh.getAxisNames().getAsValueRange<StringAttr>(),
                       workerMesh.getAxisSizes())) {
    names.push_back(name);
    bool dataParallel = name == kDataParallelAxis;
    workerSizes.push_back(dataParallel ? serverCount : size);
    serverSizes.push_back(dataParallel ? serverCount : size);
    if (!dataParallel)
      continue;
    names.push_back(kWorkerWithinServerAxis);
    workerSizes.push_back(partsPerServer());
    serverSizes.push_back(1);
  }
  auto module = workers->getParentOfType<ModuleOp>();
  OpBuilder builder(workerMesh);
  builder.setInsertionPointAfter(workerMesh);
  std::string base = workerMesh.getSymName().str();
  auto create = [&](StringRef role, ArrayRef<int64_t> sizes) {
    std::string name = base + "_" + role.str();
    for (int suffix = 1; SymbolTable::lookupSymbolIn(module, name); ++suffix)
      name = base + "_" + role.str() + std::to_string(suffix);
    return dist::MeshOp::create(builder, workerMesh.getLoc(), name,
                                b.getStrArrayAttr(names), sizes);
  };
  workerMesh = create("workers", workerSizes);
  serverMesh = create("servers", serverSizes);
  colocatedMeshName = base;
}

LogicalResult ParameterServerSplit::widenServerParts() {
  replaceMesh(servers, colocatedMeshName, serverMesh.getSymName());
  // A part's dimensions split over dp: its arguments' by their layout, the
  // rest by the parts they are computed from (the update is elementwise on
  // its parts; its sums to scalars do not widen).
  for (BlockArgument argument : servers.getArguments()) {
    auto sharding = servers.getArgAttrOfType<dist::ShardingAttr>(
        argument.getArgNumber(), dist::DistDialect::kShardingAttrName);
    if (!sharding)
      continue;
    Type widened = argument.getType();
    auto tensor = dyn_cast<RankedTensorType>(widened);
    if (!tensor || tensor.getRank() != int64_t(sharding.getDims().size()))
      return servers.emitError("argument #")
             << argument.getArgNumber() << " has a dist.sharding of "
             << sharding.getDims().size() << " dimensions for its type "
             << argument.getType();
    for (auto [dim, axes] : llvm::enumerate(sharding.getDims()))
      if (llvm::is_contained(cast<ArrayAttr>(axes),
                             StringAttr::get(context, kDataParallelAxis)))
        widened = widenPart(widened, dim);
    if (widened == argument.getType())
      continue;
    colocatedTypes[argument] = argument.getType();
    argument.setType(widened);
  }
  for (Operation &op : servers.getBody().front().without_terminator())
    for (OpResult result : op.getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type)
        continue;
      for (Value operand : op.getOperands()) {
        auto colocated = colocatedTypes.find(operand);
        if (colocated == colocatedTypes.end() ||
            cast<ShapedType>(colocated->second).getShape() != type.getShape())
          continue;
        colocatedTypes[result] = type;
        result.setType(
            type.clone(cast<ShapedType>(operand.getType()).getShape()));
        break;
      }
    }
  auto ret = cast<func::ReturnOp>(servers.getBody().front().getTerminator());
  servers.setType(FunctionType::get(
      context, servers.getBody().getArgumentTypes(), ret.getOperandTypes()));
  if (succeeded(verify(servers)))
    return success();
  return servers.emitError("runs the optimizer update on ")
         << partsPerServer()
         << " of the colocated program's parts per server, which its ops do "
            "not allow (dedicated servers fewer than the workers need an "
            "elementwise update)";
}

void ParameterServerSplit::splitWorkersDataParallelAxis() {
  replaceMesh(workers, colocatedMeshName, workerMesh.getSymName());
  auto dataParallel = StringAttr::get(context, kDataParallelAxis);
  auto within = StringAttr::get(context, kWorkerWithinServerAxis);
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](ArrayAttr array) -> std::optional<Attribute> {
    if (!llvm::is_contained(array, dataParallel) ||
        llvm::is_contained(array, within))
      return std::nullopt;
    SmallVector<Attribute> axes;
    for (Attribute axis : array) {
      axes.push_back(axis);
      if (axis == dataParallel)
        axes.push_back(within);
    }
    return ArrayAttr::get(context, axes);
  });
  replacer.recursivelyReplaceElementsIn(workers, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/false);
}

LogicalResult ParameterServerSplit::buildWorkers() {
  StringRef meshName = getMeshName(1);
  OpBuilder builder(context);
  // The pushes: every part to its server, or the whole gradient to the
  // worker's own server, as soon as the backward pass has computed it (the
  // rest of the backward pass overlaps the messages, as in BytePS).
  for (size_t index = 0; index < pushes.size(); ++index) {
    Operation *push = pushes[index];
    Value gradient = push->getOperand(0);
    builder.setInsertionPointAfterValue(gradient);
    auto sendTo = [&](Value value, std::optional<int64_t> server) {
      auto [axes, peer] = peerAt(1, server);
      setPhase(dist::SendOp::create(builder, push->getLoc(), value, meshName,
                                    axes, peer, getPushChannel(index)),
               Phase::Backward);
    };
    auto scatter = dyn_cast<dist::ReduceScatterOp>(push);
    if (!scatter) {
      sendTo(gradient, std::nullopt);
      continue;
    }
    // One server owns the whole tensor.
    if (serverCount == 1) {
      sendTo(gradient, 0);
      continue;
    }
    auto type = cast<RankedTensorType>(gradient.getType());
    int64_t dim = scatter.getDim(), length = type.getDimSize(dim) / serverCount;
    SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
    SmallVector<int64_t> sizes = llvm::to_vector(type.getShape());
    sizes[dim] = length;
    for (int64_t server = 0; server < serverCount; ++server) {
      offsets[dim] = server * length;
      auto part = SliceOp::create(builder, push->getLoc(), gradient, offsets,
                                  sizes, strides);
      setPhase(part, Phase::Backward);
      sendTo(part, server);
    }
  }

  // The pulls: every server's part joined, or the whole value from the
  // worker's own server, where the step returns it.
  auto ret = cast<func::ReturnOp>(workers.getBody().front().getTerminator());
  builder.setInsertionPoint(ret);
  for (size_t index = 0; index < pulls.size(); ++index) {
    const Pull &pull = pulls[index];
    Value value = ret.getOperand(pull.resultIndex);
    auto receive = [&](Type type, std::optional<int64_t> server) -> Value {
      auto [axes, peer] = peerAt(1, server);
      auto recv = dist::RecvOp::create(builder, value.getLoc(), type, meshName,
                                       axes, peer, getPullChannel(index));
      setPhase(recv, Phase::Update);
      return recv;
    };
    if (!pull.dim) {
      ret->setOperand(pull.resultIndex, receive(value.getType(), std::nullopt));
      continue;
    }
    Type partType =
        value.getDefiningOp<dist::AllGatherOp>().getInput().getType();
    if (hasFewerServers())
      partType = widenPart(partType, *pull.dim);
    SmallVector<Value> parts;
    for (int64_t server = 0; server < serverCount; ++server)
      parts.push_back(receive(partType, server));
    Value joined = parts.front();
    if (serverCount > 1) {
      joined = ConcatOp::create(builder, value.getLoc(), parts, *pull.dim);
      setPhase(joined.getDefiningOp(), Phase::Update);
    }
    ret->setOperand(pull.resultIndex, joined);
  }

  // The workers return all but the optimizer state, which the servers hold.
  ret->eraseOperands(stateResults);
  (void)workers.eraseResults(stateResults);
  eraseDeadOps(workers);
  eraseUnusedArguments(workers);
  bool updatesLeft = false;
  workers.walk([&](OptimizerUpdateOpInterface update) {
    updatesLeft = true;
    update->emitOpError("is read by the workers, but dedicated parameter "
                        "servers run the update");
  });
  if (updatesLeft)
    return failure();
  // The state the servers now hold must not be read by the workers too: it
  // would stay at its first value.
  for (BlockArgument argument : workers.getArguments()) {
    auto role = workers.getArgAttrOfType<StringAttr>(
        argument.getArgNumber(), ParcDialect::kRoleAttrName);
    if (role && role.getValue() == "optstate")
      return workers.emitError("reads the optimizer state argument #")
             << argument.getArgNumber()
             << " in its forward or backward pass, which dedicated parameter "
                "servers hold";
  }
  return success();
}

LogicalResult ParameterServerSplit::run() {
  if (failed(analyze()))
    return failure();
  if (hasFewerServers())
    createMeshes();
  if (failed(buildServers()) ||
      (hasFewerServers() && failed(widenServerParts())) ||
      failed(buildWorkers()))
    return failure();
  if (hasFewerServers()) {
    splitWorkersDataParallelAxis();
    // The colocated program's mesh, unless another function runs on it.
    auto module = workers->getParentOfType<ModuleOp>();
    Operation *colocated =
        SymbolTable::lookupSymbolIn(module, colocatedMeshName);
    if (colocated && SymbolTable::symbolKnownUseEmpty(colocated, module))
      colocated->erase();
  }
  // Both keep the plan's dist.parameter_server mark (the servers' clone
  // copied it): it names their stage axis.
  Builder b(context);
  workers->setAttr(kStageAttrName, b.getI64IntegerAttr(0));
  servers->setAttr(kStageAttrName, b.getI64IntegerAttr(1));
  return success();
}

} // namespace

bool mlir::parc::isDedicatedServers(func::FuncOp stage) {
  auto index = stage->getAttrOfType<IntegerAttr>(kStageAttrName);
  return stage->hasAttr(kParameterServerAttrName) && index &&
         index.getInt() == 1;
}

namespace {

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
    StringAttr markedAxis = getStageAxis(func);
    if (!func->hasAttr("dist.partitioned") || !dp || sides != 2 ||
        mesh.getAxisNames()[0] != StringAttr::get(&getContext(), kServerAxis) ||
        !markedAxis || markedAxis.getValue() != kServerAxis) {
      func.emitError("--parc-parameter-server splits a partitioned function "
                     "marked dist.parameter_server = {axis = \"ps\"} on a "
                     "mesh whose first axis is 'ps' (size 2: workers, "
                     "servers) and that has a 'dp' axis (--parc-apply-plan "
                     "makes it for dedicated parameter servers)");
      return signalPassFailure();
    }
    auto marked = func->getAttrOfType<DictionaryAttr>(kParameterServerAttrName);
    Attribute count = marked ? marked.get("servers") : nullptr;
    if (count && !isa<IntegerAttr>(count)) {
      func.emitError("has dist.parameter_server's \"servers\" ")
          << count << "; expected an integer";
      return signalPassFailure();
    }
    int64_t servers = count ? cast<IntegerAttr>(count).getInt() : *dp;
    if (servers < 1 || servers > *dp || *dp % servers) {
      func.emitError("has ")
          << servers << " dedicated parameter servers for " << *dp
          << " data-parallel workers; parc builds a number that divides the "
             "workers";
      return signalPassFailure();
    }
    if (servers < *dp && mesh.getAxisSize(kWorkerWithinServerAxis)) {
      func.emitError("runs on a mesh with an axis '")
          << kWorkerWithinServerAxis
          << "', which fewer dedicated servers than workers reserve";
      return signalPassFailure();
    }
    if (failed(ParameterServerSplit(func, mesh, *dp, servers).run()))
      return signalPassFailure();
  }
}
