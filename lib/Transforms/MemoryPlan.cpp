//===- MemoryPlan.cpp - liveness-based placement in one arena -------------===//

#include "parc/Transforms/MemoryPlan.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <map>

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

namespace {

/// First-fit allocation over address ranges that are free at a moment.
class Arena {
public:
  int64_t allocate(int64_t bytes) {
    bytes = llvm::alignTo(bytes, kAlignment);
    int64_t offset = 0;
    for (auto [start, size] : used) {
      if (start - offset >= bytes)
        break;
      offset = std::max(offset, start + size);
    }
    used[offset] = bytes;
    peak = std::max(peak, offset + bytes);
    return offset;
  }
  void release(int64_t offset) { used.erase(offset); }
  int64_t getPeak() const { return peak; }

private:
  std::map<int64_t, int64_t> used; // start -> size
  int64_t peak = 0;
};

struct MemoryPlanPass : public parc::impl::MemoryPlanPassBase<MemoryPlanPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    Operation *terminator = body.getTerminator();
    Builder builder(&getContext());

    // The last op that reads each value; returned values live to the end.
    llvm::DenseMap<Value, Operation *> lastUse;
    for (Operation &op : body)
      for (Value operand : op.getOperands())
        lastUse[operand] = &op;
    llvm::DenseSet<Value> persistent(terminator->getOperands().begin(),
                                     terminator->getOperands().end());

    Arena arena;
    int64_t total = 0;
    for (BlockArgument argument : body.getArguments()) {
      int64_t bytes = getTensorBytes(argument.getType());
      total += bytes;
      func.setArgAttr(argument.getArgNumber(), kArgOffsetAttrName,
                      builder.getI64IntegerAttr(arena.allocate(bytes)));
    }
    llvm::DenseMap<Operation *, SmallVector<int64_t>> dying;
    for (Operation &op : body) {
      if (&op == terminator)
        break;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults()) {
        int64_t bytes = getTensorBytes(result.getType());
        total += bytes;
        int64_t offset = arena.allocate(bytes);
        offsets.push_back(offset);
        Operation *last = lastUse.lookup(result);
        if (!persistent.contains(result))
          dying[last ? last : &op].push_back(offset);
      }
      op.setAttr(kOpOffsetsAttrName, builder.getDenseI64ArrayAttr(offsets));
      // Operands that die here are freed only after this op's results are
      // placed: an op never writes over its own inputs.
      for (int64_t offset : dying.lookup(&op))
        arena.release(offset);
    }
    func->setAttr(kArenaBytesAttrName,
                  builder.getI64IntegerAttr(arena.getPeak()));
    func->setAttr(kTensorBytesAttrName, builder.getI64IntegerAttr(total));
  }
};

} // namespace
