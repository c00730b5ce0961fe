//===- MemoryPlan.cpp - liveness-based placement in one arena -------------===//
//
// Tensors are placed in program order by best fit over the arena's free
// ranges (O(log n) per tensor). Two kinds of results take a buffer that
// already exists instead of a new one:
//
// - donation: a result named like an argument (a parameter's, an optimizer
//   state's or the step counter's next value) is written into the
//   argument's buffer once nothing else reads the argument, so a train step
//   holds its parameters and optimizer state once and the runner copies
//   nothing back between steps;
// - in place: a result of an InPlaceElementwise op takes the buffer of an
//   operand of its type that dies at the op.
//
// The plan is verified before it is recorded (verifyMemoryPlan).
//
//===----------------------------------------------------------------------===//

#include "parc/Transforms/MemoryPlan.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcOps.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <map>
#include <set>

namespace mlir::parc {
#define GEN_PASS_DEF_MEMORYPLANPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

static constexpr int64_t kAlignment = 64;

int64_t mlir::parc::getTensorBytes(Type type) {
  auto shaped = cast<ShapedType>(type);
  return shaped.getNumElements() *
         std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8);
}

std::optional<int64_t> mlir::parc::getArenaOffset(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    if (auto offset = func ? func.getArgAttrOfType<IntegerAttr>(
                                 argument.getArgNumber(), kArgOffsetAttrName)
                           : IntegerAttr())
      return offset.getInt();
    return std::nullopt;
  }
  auto result = cast<OpResult>(value);
  auto offsets =
      result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(kOpOffsetsAttrName);
  if (!offsets || offsets.size() <= static_cast<int64_t>(result.getResultNumber()))
    return std::nullopt;
  return offsets[result.getResultNumber()];
}

bool mlir::parc::mayWriteOver(Operation *op, Value operand, Value result) {
  return op->hasTrait<InPlaceElementwise>() &&
         operand.getType() == result.getType() &&
         llvm::is_contained(op->getOperands(), operand);
}

namespace {

/// Best fit over the free ranges below the arena's top: the smallest free
/// range that holds the tensor (the lowest of equal ones), else the top
/// grows. Freed ranges merge with their free neighbours; a free range that
/// reaches the top lowers it.
class Arena {
public:
  int64_t allocate(int64_t bytes) {
    bytes = llvm::alignTo(bytes, kAlignment);
    auto fit = bySize.lower_bound({bytes, 0});
    int64_t offset;
    if (fit != bySize.end()) {
      auto [size, start] = *fit;
      removeFree(start);
      offset = start;
      if (size > bytes)
        addFree(start + bytes, size - bytes);
    } else {
      offset = top;
      top += bytes;
      peak = std::max(peak, top);
    }
    sizes[offset] = bytes;
    return offset;
  }

  void release(int64_t offset) {
    int64_t start = offset, size = sizes.at(offset);
    sizes.erase(offset);
    // Merge with the free neighbours on both sides.
    auto next = byOffset.lower_bound(start);
    if (next != byOffset.end() && next->first == start + size) {
      size += next->second;
      removeFree(next->first);
    }
    auto previous = byOffset.lower_bound(start);
    if (previous != byOffset.begin()) {
      --previous;
      if (previous->first + previous->second == start) {
        start = previous->first;
        size += previous->second;
        removeFree(start);
      }
    }
    if (start + size == top)
      top = start;
    else
      addFree(start, size);
  }

  int64_t getPeak() const { return peak; }

private:
  void addFree(int64_t start, int64_t size) {
    byOffset[start] = size;
    bySize.insert({size, start});
  }
  void removeFree(int64_t start) {
    auto it = byOffset.find(start);
    bySize.erase({it->second, start});
    byOffset.erase(it);
  }

  std::map<int64_t, int64_t> byOffset;           // start -> size
  std::set<std::pair<int64_t, int64_t>> bySize;  // (size, start)
  llvm::DenseMap<int64_t, int64_t> sizes;        // allocated start -> size
  int64_t top = 0, peak = 0;
};

struct MemoryPlanPass : public parc::impl::MemoryPlanPassBase<MemoryPlanPass> {
  void runOnOperation() override;
};

} // namespace

void MemoryPlanPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  Builder builder(&getContext());

  // Program positions; the last op that reads each value. Returned values
  // live to the end.
  llvm::DenseMap<Operation *, int64_t> position;
  llvm::DenseMap<Value, Operation *> lastUse;
  for (auto [index, op] : llvm::enumerate(body)) {
    position[&op] = index;
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  }
  llvm::DenseSet<Value> persistent(terminator->getOperands().begin(),
                                   terminator->getOperands().end());

  // Donation: the argument whose next value each returned result is, when
  // the result's op comes after every other read of the argument (or is its
  // last reader and may write over it).
  llvm::StringMap<BlockArgument> argumentsByName;
  for (BlockArgument argument : body.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(
            argument.getArgNumber(), ParcDialect::kNameAttrName))
      argumentsByName[name.getValue()] = argument;
  llvm::DenseMap<Value, BlockArgument> donatedTo;
  llvm::DenseSet<Value> donated;
  for (auto [result, name] :
       llvm::zip_equal(terminator->getOperands(), getResultNames(func))) {
    auto it = argumentsByName.find(name);
    Operation *producer = result.getDefiningOp();
    if (it == argumentsByName.end() || !producer ||
        donated.contains(it->second) ||
        result.getType() != it->second.getType() || donatedTo.count(result))
      continue;
    BlockArgument argument = it->second;
    Operation *last = lastUse.lookup(argument);
    bool free = !last || last == terminator ||
                position[last] < position[producer] ||
                (last == producer && mayWriteOver(producer, argument, result));
    if (free && !persistent.contains(argument)) {
      donatedTo[result] = argument;
      donated.insert(argument);
    }
  }

  Arena arena;
  int64_t total = 0;
  llvm::DenseMap<Value, int64_t> offsetOf;
  // All argument attributes at once: one setArgAttr each would rebuild the
  // whole list every time.
  SmallVector<DictionaryAttr> argumentAttrs;
  for (BlockArgument argument : body.getArguments()) {
    int64_t bytes = getTensorBytes(argument.getType());
    total += bytes;
    offsetOf[argument] = arena.allocate(bytes);
    NamedAttrList attrs(func.getArgAttrDict(argument.getArgNumber()));
    attrs.set(kArgOffsetAttrName, builder.getI64IntegerAttr(offsetOf[argument]));
    argumentAttrs.push_back(attrs.getDictionary(&getContext()));
  }
  func.setAllArgAttrs(argumentAttrs);
  for (Operation &op : body) {
    if (&op == terminator)
      break;
    SmallVector<int64_t> offsets;
    // Operands whose buffer a result of this op took: not freed.
    llvm::DenseSet<Value> taken;
    for (Value result : op.getResults()) {
      int64_t bytes = getTensorBytes(result.getType());
      total += bytes;
      std::optional<int64_t> offset;
      if (auto argument = donatedTo.lookup(result)) {
        offset = offsetOf[argument];
      } else {
        for (Value operand : op.getOperands())
          if (!isa<BlockArgument>(operand) && lastUse.lookup(operand) == &op &&
              !persistent.contains(operand) && !taken.contains(operand) &&
              mayWriteOver(&op, operand, result)) {
            offset = offsetOf[operand];
            taken.insert(operand);
            break;
          }
      }
      if (!offset)
        offset = arena.allocate(bytes);
      offsetOf[result] = *offset;
      offsets.push_back(*offset);
    }
    op.setAttr(kOpOffsetsAttrName, builder.getDenseI64ArrayAttr(offsets));
    // Operands that die here are freed only after this op's results are
    // placed: an op writes over its inputs only where it may.
    llvm::DenseSet<Value> freed;
    for (Value operand : op.getOperands())
      if (!isa<BlockArgument>(operand) && lastUse.lookup(operand) == &op &&
          !persistent.contains(operand) && !taken.contains(operand) &&
          freed.insert(operand).second)
        arena.release(offsetOf[operand]);
    // A result nothing reads dies at once.
    for (Value result : op.getResults())
      if (result.use_empty() && !donatedTo.count(result))
        arena.release(offsetOf[result]);
  }
  func->setAttr(kArenaBytesAttrName, builder.getI64IntegerAttr(arena.getPeak()));
  func->setAttr(kTensorBytesAttrName, builder.getI64IntegerAttr(total));
  if (failed(verifyMemoryPlan(func)))
    signalPassFailure();
}
