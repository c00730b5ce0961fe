//===- VerifyMemoryPlan.cpp - no two live tensors share bytes -------------===//
//
// A sweep in program order over the tensors' lifetimes: the live tensors
// are kept by offset (they never overlap each other), so each new tensor is
// checked against its two neighbours only.
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/MemoryPlan.h"

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/Passes.h"

#include <map>

namespace mlir::parc {
#define GEN_PASS_DEF_VERIFYMEMORYPLANPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

/// How a diagnostic names a tensor.
static std::string describe(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return "argument #" + std::to_string(argument.getArgNumber());
  auto result = cast<OpResult>(value);
  return "result #" + std::to_string(result.getResultNumber()) + " of '" +
         result.getOwner()->getName().getStringRef().str() + "'";
}

FailureOr<SmallVector<TensorLifetime>>
mlir::parc::getTensorLifetimes(func::FuncOp func) {
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  auto arena = func->getAttrOfType<IntegerAttr>(kArenaBytesAttrName);
  if (!arena)
    return func.emitError("has no memory plan (parc.arena_bytes)");
  llvm::DenseMap<Operation *, int64_t> position;
  llvm::DenseMap<Value, int64_t> lastUse;
  for (auto [index, op] : llvm::enumerate(body)) {
    position[&op] = index;
    for (Value operand : op.getOperands())
      lastUse[operand] = index;
  }
  int64_t end = position[terminator];

  SmallVector<TensorLifetime> lifetimes;
  auto add = [&](Value value, int64_t start) -> LogicalResult {
    std::optional<int64_t> offset = getArenaOffset(value);
    int64_t bytes = getTensorBytes(value.getType());
    Location loc = isa<BlockArgument>(value) ? func.getLoc() : value.getLoc();
    if (!offset || *offset < 0 || *offset + bytes > arena.getInt())
      return emitError(loc, "memory plan: ")
             << describe(value) << " lies outside the "
             << arena.getInt() << "-byte arena";
    if (bytes > 0)
      lifetimes.push_back({value, *offset, bytes, start,
                           std::max(start, lastUse.lookup(value))});
    return success();
  };
  for (BlockArgument argument : body.getArguments())
    if (failed(add(argument, -1)))
      return failure();
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults())
      if (failed(add(result, position[&op])))
        return failure();

  // Returned values live to the end; so does an argument, unless its
  // buffer goes to its own next value, which the runner then reads as the
  // argument of the next step.
  llvm::StringMap<Value> returnedAs;
  for (auto [value, name] :
       llvm::zip_equal(terminator->getOperands(), getResultNames(func)))
    returnedAs[name] = value;
  llvm::DenseSet<Value> returned(terminator->getOperands().begin(),
                                 terminator->getOperands().end());
  llvm::DenseMap<Value, const TensorLifetime *> lifetimeOf;
  for (const TensorLifetime &lifetime : lifetimes)
    lifetimeOf[lifetime.value] = &lifetime;
  for (TensorLifetime &lifetime : lifetimes) {
    if (returned.contains(lifetime.value)) {
      lifetime.end = end;
      continue;
    }
    auto argument = dyn_cast<BlockArgument>(lifetime.value);
    if (!argument)
      continue;
    auto name = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kNameAttrName);
    Value next = name ? returnedAs.lookup(name.getValue()) : Value();
    const TensorLifetime *nextLifetime =
        next ? lifetimeOf.lookup(next) : nullptr;
    bool donated = nextLifetime && !isa<BlockArgument>(next) &&
                   nextLifetime->offset == lifetime.offset &&
                   nextLifetime->bytes == lifetime.bytes;
    if (!donated)
      lifetime.end = end;
  }
  llvm::stable_sort(lifetimes,
                    [](const TensorLifetime &a, const TensorLifetime &b) {
                      return a.start < b.start;
                    });
  return lifetimes;
}

LogicalResult mlir::parc::verifyMemoryPlan(func::FuncOp func) {
  FailureOr<SmallVector<TensorLifetime>> lifetimes = getTensorLifetimes(func);
  if (failed(lifetimes))
    return failure();
  std::map<int64_t, const TensorLifetime *> live;         // by offset
  std::multimap<int64_t, const TensorLifetime *> endings; // by end
  auto expire =
      [&](std::multimap<int64_t, const TensorLifetime *>::iterator it) {
        live.erase(it->second->offset);
        return endings.erase(it);
      };
  for (const TensorLifetime &lifetime : *lifetimes) {
    while (!endings.empty() && endings.begin()->first < lifetime.start)
      expire(endings.begin());
    // An operand read for the last time by the op that writes this tensor
    // may share its buffer where the op may write over it.
    Operation *writer = lifetime.value.getDefiningOp();
    auto [first, last] = endings.equal_range(lifetime.start);
    for (auto it = first; it != last;)
      it = writer && it->second->offset == lifetime.offset &&
                   mayWriteOver(writer, it->second->value, lifetime.value)
               ? expire(it)
               : std::next(it);
    auto clash = [&](const TensorLifetime *other) {
      InFlightDiagnostic diag = emitError(
          isa<BlockArgument>(lifetime.value) ? func.getLoc()
                                             : lifetime.value.getLoc(),
          "memory plan: ");
      diag << describe(lifetime.value) << " [" << lifetime.offset << ", "
           << lifetime.offset + lifetime.bytes << ") overlaps "
           << describe(other->value) << " [" << other->offset << ", "
           << other->offset + other->bytes << "), which is still live";
      return diag;
    };
    auto after = live.lower_bound(lifetime.offset);
    if (after != live.end() &&
        after->second->offset < lifetime.offset + lifetime.bytes)
      return clash(after->second);
    if (after != live.begin()) {
      const TensorLifetime *before = std::prev(after)->second;
      if (before->offset + before->bytes > lifetime.offset)
        return clash(before);
    }
    live[lifetime.offset] = &lifetime;
    endings.insert({lifetime.end, &lifetime});
  }
  return success();
}

namespace {
struct VerifyMemoryPlanPass
    : public parc::impl::VerifyMemoryPlanPassBase<VerifyMemoryPlanPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.isExternal() && failed(verifyMemoryPlan(func)))
      signalPassFailure();
  }
};
} // namespace
