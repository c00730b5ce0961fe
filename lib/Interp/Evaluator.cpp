//===- Evaluator.cpp - the reference evaluator ----------------------------===//
//
// Every simulated rank advances through its own function on its own: local
// ops run at once, a send queues its message on the channel (a send never
// waits, as the runtime buffers it), a receive waits for its message, and a
// collective waits until every member of its group has reached it. Ranks
// may run different functions (pipeline stages); when no rank can move,
// the program deadlocks and the error says where each rank waits.
//
//===----------------------------------------------------------------------===//

#include "parc/Interp/Evaluator.h"

#include "parc/Interp/CollectiveEvaluableOpInterface.h"
#include "parc/Interp/EvaluableOpInterface.h"

#include "dist/IR/DistInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <deque>
#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::parc::interp;

/// Rounds every value to the nearest value of `type` (ties to even), as a
/// kernel would store it: f32 results, and the f16/bf16 results of mixed
/// precision, which the runtime computes in f32 and rounds once.
static void roundToStored(Tensor &tensor, Type type) {
  auto floatType = dyn_cast<FloatType>(getElementTypeOrSelf(type));
  if (!floatType || floatType.isF64())
    return;
  if (floatType.isF32()) {
    for (double &value : tensor.values)
      value = static_cast<double>(static_cast<float>(value));
    return;
  }
  const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
  for (double &value : tensor.values) {
    llvm::APFloat stored(value);
    bool inexact;
    stored.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &inexact);
    stored.convert(llvm::APFloat::IEEEdouble(),
                   llvm::APFloat::rmNearestTiesToEven, &inexact);
    value = stored.convertToDouble();
  }
}

namespace {

/// One simulated rank: its function, the next op it runs, its values.
struct RankRun {
  func::FuncOp func;
  Block::iterator next;
  llvm::DenseMap<Value, Tensor> values;
  SmallVector<Tensor> results;
  bool done = false;
};

class Simulation {
public:
  Simulation(const MeshLayout *mesh, Precision precision)
      : mesh(mesh), precision(precision) {}

  LogicalResult start(func::FuncOp func, ArrayRef<Tensor> arguments);
  LogicalResult run();
  SmallVector<SmallVector<Tensor>> takeResults();

private:
  enum class Progress { Moved, Blocked, Failed };
  /// Runs rank `rank`'s ops until it finishes, fails or must wait.
  Progress advance(int64_t rank);
  /// Runs the collectives whose whole group waits at them.
  Progress meet();
  void store(RankRun &run, Operation &op, SmallVector<Tensor> &results);
  LogicalResult reportDeadlock();

  const MeshLayout *mesh;
  Precision precision;
  SmallVector<RankRun> ranks;
  /// Messages in flight by (sender, receiver, channel), oldest first.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<Tensor>> channels;
};

} // namespace

LogicalResult Simulation::start(func::FuncOp func, ArrayRef<Tensor> arguments) {
  if (func.isExternal())
    return func.emitError("cannot evaluate a function without a body");
  Block &body = func.getBody().front();
  if (arguments.size() != body.getNumArguments())
    return func.emitError() << "expected " << body.getNumArguments()
                            << " arguments, got " << arguments.size();
  RankRun &run = ranks.emplace_back();
  run.func = func;
  run.next = body.begin();
  for (auto [argument, tensor] :
       llvm::zip_equal(body.getArguments(), arguments)) {
    auto type = cast<ShapedType>(argument.getType());
    if (ArrayRef<int64_t>(tensor.shape) != type.getShape())
      return func.emitError() << "argument #" << argument.getArgNumber()
                              << " is given with a shape that differs from "
                              << type;
    Tensor &stored = run.values[argument] = tensor;
    // Arguments are stored as their element type too.
    if (precision == Precision::Stored)
      roundToStored(stored, argument.getType());
  }
  return success();
}

void Simulation::store(RankRun &run, Operation &op,
                       SmallVector<Tensor> &results) {
  for (auto [result, tensor] : llvm::zip_equal(op.getResults(), results)) {
    if (precision == Precision::Stored)
      roundToStored(tensor, result.getType());
    run.values[result] = std::move(tensor);
  }
}

Simulation::Progress Simulation::advance(int64_t rank) {
  RankRun &run = ranks[rank];
  Progress progress = Progress::Blocked;
  while (!run.done) {
    Operation &op = *run.next;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value operand : ret.getOperands())
        run.results.push_back(run.values.lookup(operand));
      run.done = true;
      return Progress::Moved;
    }
    if (isa<CollectiveEvaluableOpInterface>(op)) {
      if (!mesh) {
        op.emitOpError("is a collective; evaluate it on a mesh");
        return Progress::Failed;
      }
      return progress; // meet() runs it with its group
    }
    if (isa<dist::SendOp, dist::RecvOp>(op) && !mesh) {
      op.emitOpError("is point-to-point; evaluate it on a mesh");
      return Progress::Failed;
    }
    // A point-to-point op's peer: a rank of the mesh of the stage it
    // addresses, or an error.
    auto peerOf = [&](ArrayAttr axes,
                      ArrayRef<int64_t> coordinates) -> int64_t {
      int64_t peer = mesh->getPeerRank(rank, axisNames(axes), coordinates);
      if (peer < 0)
        op.emitOpError("on rank ")
            << rank << " names a peer outside the mesh of the stage it "
            << "addresses";
      return peer;
    };
    if (auto send = dyn_cast<dist::SendOp>(op)) {
      int64_t to = peerOf(send.getAxes(), send.getPeer());
      if (to < 0)
        return Progress::Failed;
      channels[{rank, to, send.getChannel()}].push_back(
          run.values.lookup(send.getInput()));
    } else if (auto recv = dyn_cast<dist::RecvOp>(op)) {
      int64_t from = peerOf(recv.getAxes(), recv.getPeer());
      if (from < 0)
        return Progress::Failed;
      auto it = channels.find({from, rank, recv.getChannel()});
      if (it == channels.end() || it->second.empty())
        return progress;
      Tensor message = std::move(it->second.front());
      it->second.pop_front();
      if (ArrayRef<int64_t>(message.shape) != recv.getType().getShape()) {
        op.emitOpError("receives a tensor of another shape from rank ")
            << from << " on channel " << recv.getChannel();
        return Progress::Failed;
      }
      SmallVector<Tensor> results;
      results.push_back(std::move(message));
      store(run, op, results);
    } else if (auto evaluable = dyn_cast<EvaluableOpInterface>(op)) {
      SmallVector<const Tensor *> operands;
      for (Value operand : op.getOperands())
        operands.push_back(&run.values[operand]);
      SmallVector<Tensor> results;
      for (Type type : op.getResultTypes())
        results.emplace_back(cast<ShapedType>(type).getShape());
      if (failed(evaluable.evaluate(operands, results)))
        return Progress::Failed;
      store(run, op, results);
    } else {
      op.emitOpError("has no reference kernel");
      return Progress::Failed;
    }
    ++run.next;
    progress = Progress::Moved;
  }
  return progress;
}

Simulation::Progress Simulation::meet() {
  Progress progress = Progress::Blocked;
  for (int64_t rank = 0; rank < int64_t(ranks.size()); ++rank) {
    RankRun &run = ranks[rank];
    if (run.done || !isa<CollectiveEvaluableOpInterface>(*run.next))
      continue;
    Operation *op = &*run.next;
    ArrayAttr axes = cast<dist::CommunicationOpInterface>(op).getGroupAxes();
    SmallVector<int64_t> group = mesh->getGroup(rank, axisNames(axes));
    // Every member must wait at the same collective (kind and group).
    bool ready = llvm::all_of(group, [&](int64_t member) {
      const RankRun &other = ranks[member];
      if (other.done)
        return false;
      Operation &theirs = *other.next;
      return theirs.getName() == op->getName() &&
             cast<dist::CommunicationOpInterface>(theirs).getGroupAxes() ==
                 axes &&
             theirs.getResultTypes() == op->getResultTypes();
    });
    if (!ready)
      continue;
    size_t numRanks = ranks.size();
    SmallVector<SmallVector<const Tensor *>> operands(numRanks);
    SmallVector<SmallVector<Tensor>> results(numRanks);
    for (int64_t member : group) {
      Operation &theirs = *ranks[member].next;
      for (Value operand : theirs.getOperands())
        operands[member].push_back(&ranks[member].values[operand]);
      for (Type type : theirs.getResultTypes())
        results[member].emplace_back(cast<ShapedType>(type).getShape());
    }
    if (failed(cast<CollectiveEvaluableOpInterface>(op).evaluateOnMesh(
            *mesh, group, operands, results)))
      return Progress::Failed;
    for (int64_t member : group) {
      RankRun &theirs = ranks[member];
      store(theirs, *theirs.next, results[member]);
      ++theirs.next;
    }
    progress = Progress::Moved;
  }
  return progress;
}

LogicalResult Simulation::reportDeadlock() {
  for (const RankRun &run : ranks) {
    if (run.done)
      continue;
    InFlightDiagnostic diag =
        run.next->emitOpError("waits forever: the simulated ranks deadlock");
    for (auto [rank, other] : llvm::enumerate(ranks))
      if (!other.done)
        diag.attachNote(other.next->getLoc())
            << "rank " << rank << " waits in " << other.next->getName();
    return diag;
  }
  return failure();
}

LogicalResult Simulation::run() {
  while (llvm::any_of(ranks, [](const RankRun &run) { return !run.done; })) {
    bool moved = false;
    for (int64_t rank = 0; rank < int64_t(ranks.size()); ++rank) {
      Progress progress = advance(rank);
      if (progress == Progress::Failed)
        return failure();
      moved |= progress == Progress::Moved;
    }
    Progress progress = meet();
    if (progress == Progress::Failed)
      return failure();
    moved |= progress == Progress::Moved;
    if (!moved)
      return reportDeadlock();
  }
  return success();
}

SmallVector<SmallVector<Tensor>> Simulation::takeResults() {
  SmallVector<SmallVector<Tensor>> results;
  for (RankRun &run : ranks)
    results.push_back(std::move(run.results));
  return results;
}

FailureOr<SmallVector<Tensor>>
mlir::parc::interp::evaluateFunction(func::FuncOp func,
                                     ArrayRef<Tensor> arguments,
                                     Precision precision) {
  Simulation simulation(nullptr, precision);
  if (failed(simulation.start(func, arguments)) || failed(simulation.run()))
    return failure();
  return std::move(simulation.takeResults().front());
}

FailureOr<SmallVector<SmallVector<Tensor>>>
mlir::parc::interp::evaluateRanks(ArrayRef<func::FuncOp> rankFunctions,
                                  const MeshLayout &mesh,
                                  ArrayRef<SmallVector<Tensor>> rankArguments,
                                  Precision precision) {
  if (int64_t(rankArguments.size()) != mesh.getNumRanks() ||
      rankFunctions.size() != rankArguments.size())
    return func::FuncOp(rankFunctions.front()).emitError()
           << "expected functions and arguments for " << mesh.getNumRanks()
           << " ranks, got " << rankFunctions.size() << " and "
           << rankArguments.size();
  Simulation simulation(&mesh, precision);
  for (auto [func, arguments] : llvm::zip_equal(rankFunctions, rankArguments))
    if (failed(simulation.start(func, arguments)))
      return failure();
  if (failed(simulation.run()))
    return failure();
  return simulation.takeResults();
}

FailureOr<SmallVector<SmallVector<Tensor>>>
mlir::parc::interp::evaluateOnMesh(func::FuncOp func, const MeshLayout &mesh,
                                   ArrayRef<SmallVector<Tensor>> rankArguments,
                                   Precision precision) {
  SmallVector<func::FuncOp> functions(rankArguments.size(), func);
  return evaluateRanks(functions, mesh, rankArguments, precision);
}
