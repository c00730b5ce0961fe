//===- MemoryPlan.cpp - liveness-based placement in one arena -------------===//
//
// Arguments lie at the bottom of the arena, in order. Results are placed
// once all lifetimes are known (placeBuffers), in O(n log n) for n
// results. Two kinds of
// results take a buffer that already exists instead of a new one:
//
// - donation: a result named like an argument (a parameter's, an optimizer
//   state's or the step counter's next value) is written into the
//   argument's buffer once nothing else reads the argument, so a train step
//   holds its parameters and optimizer state once and the runner copies
//   nothing back between steps;
// - in place: a result of a MayWriteOverOperand op takes the buffer of an
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
#include <numeric>
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
  return op->hasTrait<MayWriteOverOperand>() &&
         operand.getType() == result.getType() &&
         llvm::is_contained(op->getOperands(), operand);
}

namespace {

/// Tensors that share one buffer (a result written over an operand that
/// dies at its op), live from the first's definition to the last's end.
struct Buffer {
  int64_t bytes = 0, start = 0, end = 0;
  int64_t offset = 0;
};

/// Which gap a buffer takes among those it fits in.
enum class Fit { Smallest, Lowest };

/// Offline placement by size (Pisarchyk and Lee, "Efficient Memory
/// Management for Deep Neural Net Inference", 2020; TFLite's greedy-by-size
/// planner): buffers in `order`, each in the smallest (or the lowest) gap
/// left by the placed buffers whose lifetimes overlap its own, else above
/// them. Knowing every lifetime up front keeps a short-lived buffer out of
/// a gap a long-lived one needs later, which placement in program order
/// cannot. Each buffer's gap is found by walking the placed buffers up from
/// the bottom, O(n) per buffer: a train step keeps O(layers) activations
/// live across its backward pass, so the walk grows as n^2. It gives up
/// after `budget` visits in all and returns nullopt; else the top.
std::optional<int64_t> placeInOrder(MutableArrayRef<Buffer> buffers,
                                    ArrayRef<int64_t> order, Fit fit,
                                    int64_t budget) {
  SmallVector<int64_t> placed; // by offset
  int64_t top = 0;
  for (int64_t index : order) {
    Buffer &buffer = buffers[index];
    if (buffer.bytes == 0)
      continue;
    int64_t below = 0, best = -1, bestGap = 0;
    for (int64_t other : placed) {
      if (--budget < 0)
        return std::nullopt;
      const Buffer &neighbour = buffers[other];
      if (neighbour.end < buffer.start || buffer.end < neighbour.start)
        continue;
      int64_t gap = neighbour.offset - below;
      if (gap >= buffer.bytes &&
          (best < 0 || (fit == Fit::Smallest && gap < bestGap))) {
        best = below;
        bestGap = gap;
        // Gaps further up are higher.
        if (fit == Fit::Lowest)
          break;
      }
      below = std::max(below, neighbour.offset + neighbour.bytes);
    }
    buffer.offset = best >= 0 ? best : below;
    top = std::max(top, buffer.offset + buffer.bytes);
    auto at = llvm::upper_bound(placed, buffer.offset,
                                [&](int64_t offset, int64_t other) {
                                  return offset < buffers[other].offset;
                                });
    // Moving the buffers above counts as visiting them.
    budget -= placed.end() - at;
    if (budget < 0)
      return std::nullopt;
    placed.insert(at, index);
  }
  return top;
}

/// Best fit in program order over the arena's free ranges: each buffer, as
/// its lifetime starts, takes the smallest free range that holds it (the
/// lowest of equal ones), else the top grows; a buffer's range is freed
/// when its lifetime has ended, merged with its free neighbours. O(log n)
/// per buffer.
class BestFitArena {
public:
  int64_t allocate(int64_t bytes) {
    int64_t offset = top;
    auto fit = freeBySize.lower_bound({bytes, 0});
    if (fit != freeBySize.end()) {
      auto [size, begin] = *fit;
      removeFree(begin);
      offset = begin;
      if (size > bytes)
        addFree(begin + bytes, size - bytes);
    } else {
      top += bytes;
      peak = std::max(peak, top);
    }
    return offset;
  }

  void release(int64_t begin, int64_t size) {
    auto next = freeByOffset.lower_bound(begin);
    if (next != freeByOffset.end() && next->first == begin + size) {
      size += next->second;
      next = removeFree(next->first);
    }
    if (next != freeByOffset.begin() &&
        std::prev(next)->first + std::prev(next)->second == begin) {
      begin = std::prev(next)->first;
      size += std::prev(next)->second;
      removeFree(begin);
    }
    if (begin + size == top)
      top = begin;
    else
      addFree(begin, size);
  }

  int64_t getPeak() const { return peak; }

private:
  void addFree(int64_t begin, int64_t size) {
    freeByOffset[begin] = size;
    freeBySize.insert({size, begin});
  }
  std::map<int64_t, int64_t>::iterator removeFree(int64_t begin) {
    auto it = freeByOffset.find(begin);
    freeBySize.erase({it->second, begin});
    return freeByOffset.erase(it);
  }

  std::map<int64_t, int64_t> freeByOffset;          // begin -> size
  std::set<std::pair<int64_t, int64_t>> freeBySize; // (size, begin)
  int64_t top = 0, peak = 0;
};

/// Places every buffer by best fit in program order; returns the top.
int64_t placeByBestFit(MutableArrayRef<Buffer> buffers) {
  SmallVector<int64_t> byStart(buffers.size());
  std::iota(byStart.begin(), byStart.end(), 0);
  llvm::stable_sort(byStart, [&](int64_t a, int64_t b) {
    return buffers[a].start < buffers[b].start;
  });
  BestFitArena arena;
  std::multimap<int64_t, int64_t> live; // end -> buffer
  for (int64_t index : byStart) {
    Buffer &buffer = buffers[index];
    if (buffer.bytes == 0)
      continue;
    for (; !live.empty() && live.begin()->first < buffer.start;
         live.erase(live.begin())) {
      const Buffer &ended = buffers[live.begin()->second];
      arena.release(ended.offset, ended.bytes);
    }
    buffer.offset = arena.allocate(buffer.bytes);
    live.insert({buffer.end, index});
  }
  return arena.getPeak();
}

/// The bytes of the buffers live at each program position.
SmallVector<int64_t> getLiveBytes(ArrayRef<Buffer> buffers) {
  int64_t positions = 1;
  for (const Buffer &buffer : buffers)
    positions = std::max(positions, buffer.end + 1);
  SmallVector<int64_t> live(positions + 1, 0);
  for (const Buffer &buffer : buffers) {
    live[buffer.start] += buffer.bytes;
    live[buffer.end + 1] -= buffer.bytes;
  }
  for (int64_t p = 1; p < positions; ++p)
    live[p] += live[p - 1];
  live.pop_back();
  return live;
}

/// Greedy by breadth (the same paper): the buffers live at the program
/// position with the most bytes first, largest first, then those of the
/// next fullest position not placed yet. The fullest position's buffers
/// then pack without a gap. Each buffer goes with the fullest position of
/// its lifetime, found by a range-maximum query (sparse table): O(n log n).
SmallVector<int64_t> orderByBreadth(ArrayRef<Buffer> buffers) {
  SmallVector<int64_t> live = getLiveBytes(buffers);
  int64_t positions = live.size();
  // fullest[k][p]: the fullest position in [p, p + 2^k), the earliest of
  // equals.
  auto fuller = [&](int64_t a, int64_t b) {
    return live[b] > live[a] || (live[b] == live[a] && b < a) ? b : a;
  };
  SmallVector<SmallVector<int64_t>> fullest(1);
  fullest[0].resize(positions);
  std::iota(fullest[0].begin(), fullest[0].end(), 0);
  for (int64_t width = 1; 2 * width <= positions; width *= 2) {
    const SmallVector<int64_t> &previous = fullest.back();
    SmallVector<int64_t> next(positions - 2 * width + 1);
    for (int64_t p = 0; p < int64_t(next.size()); ++p)
      next[p] = fuller(previous[p], previous[p + width]);
    fullest.push_back(std::move(next));
  }
  SmallVector<int64_t> claimedBy(buffers.size());
  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    int64_t level = llvm::Log2_64(buffer.end - buffer.start + 1);
    claimedBy[index] =
        fuller(fullest[level][buffer.start],
               fullest[level][buffer.end - (int64_t(1) << level) + 1]);
  }
  SmallVector<int64_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](int64_t a, int64_t b) {
    auto key = [&](int64_t index) {
      int64_t position = claimedBy[index];
      return std::make_tuple(-live[position], position, -buffers[index].bytes,
                             buffers[index].start);
    };
    return key(a) < key(b);
  });
  return order;
}

/// The best of six placements. Best fit in program order, O(n log n), and
/// five offline ones that each may visit `greedyWork` n log2 n placed
/// buffers: the largest first, with the longest-lived or the earliest first
/// among buffers of one size, each in the lowest gap; by breadth, in the
/// smallest or the lowest gap; and the longest-lived first, the largest
/// first among equals, in the lowest gap. None wins on every program (over
/// bench/planner's 54 train steps and gpt2-small each of the first four
/// offline ones is the only best somewhere; the size orders in the smallest
/// gap never are; the lifetime order is the best, 2.2 MB below the others,
/// on the 4-layer GPT at dp=2 with ZeRO-3, whose parameters' gathered
/// copies leave gaps between long-lived buffers). The offline placements
/// matter on small programs (a hole of a few large buffers is a large part
/// of their arena: best fit is 15% larger on the 4-layer GPT). On deep
/// ones, where their walk would take n^2, best fit is what finishes, within
/// 175 KB of them on GPT train steps of 192-768 layers (bench/memory-plan).
int64_t placeBuffers(MutableArrayRef<Buffer> buffers, int64_t greedyWork) {
  int64_t count = buffers.size(), budget;
  if (llvm::MulOverflow(greedyWork, count * llvm::Log2_64_Ceil(count + 1),
                        budget))
    budget = INT64_MAX;
  SmallVector<int64_t> longestFirst(count);
  std::iota(longestFirst.begin(), longestFirst.end(), 0);
  SmallVector<int64_t> earliestFirst = longestFirst;
  SmallVector<int64_t> longestLivedFirst = longestFirst;
  llvm::stable_sort(longestFirst, [&](int64_t a, int64_t b) {
    auto key = [&](const Buffer &x) {
      return std::make_tuple(-x.bytes, x.start - x.end, x.start);
    };
    return key(buffers[a]) < key(buffers[b]);
  });
  llvm::stable_sort(earliestFirst, [&](int64_t a, int64_t b) {
    return std::make_pair(-buffers[a].bytes, buffers[a].start) <
           std::make_pair(-buffers[b].bytes, buffers[b].start);
  });
  llvm::stable_sort(longestLivedFirst, [&](int64_t a, int64_t b) {
    auto key = [&](const Buffer &x) {
      return std::make_tuple(x.start - x.end, -x.bytes, x.start);
    };
    return key(buffers[a]) < key(buffers[b]);
  });
  SmallVector<int64_t> byBreadth = orderByBreadth(buffers);
  SmallVector<Buffer> bestPlacement(buffers.begin(), buffers.end());
  int64_t best = placeByBestFit(bestPlacement);
  for (auto [order, fit] : {std::make_pair(&longestFirst, Fit::Lowest),
                            std::make_pair(&earliestFirst, Fit::Lowest),
                            std::make_pair(&byBreadth, Fit::Smallest),
                            std::make_pair(&byBreadth, Fit::Lowest),
                            std::make_pair(&longestLivedFirst, Fit::Lowest)}) {
    SmallVector<Buffer> placement(buffers.begin(), buffers.end());
    std::optional<int64_t> top = placeInOrder(placement, *order, fit, budget);
    // The others walk about as far.
    if (!top)
      break;
    if (*top < best) {
      best = *top;
      bestPlacement = std::move(placement);
    }
  }
  llvm::copy(bestPlacement, buffers.begin());
  return best;
}

struct MemoryPlanPass : public parc::impl::MemoryPlanPassBase<MemoryPlanPass> {
  using MemoryPlanPassBase::MemoryPlanPassBase;
  void runOnOperation() override;
};

} // namespace

void MemoryPlanPass::runOnOperation() {
  func::FuncOp func = getOperation();
  if (func.isExternal())
    return;
  if (greedyWork < 0) {
    func.emitError("--parc-plan-memory: greedy-work must not be negative, "
                   "got ")
        << static_cast<int64_t>(greedyWork);
    return signalPassFailure();
  }
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

  // Arguments persist across steps: they lie below everything else.
  int64_t argumentBytes = 0, total = 0;
  llvm::DenseMap<Value, int64_t> argumentOffset;
  // All argument attributes at once: one setArgAttr each would rebuild the
  // whole list every time.
  SmallVector<DictionaryAttr> argumentAttrs;
  for (BlockArgument argument : body.getArguments()) {
    int64_t bytes = getTensorBytes(argument.getType());
    total += bytes;
    argumentOffset[argument] = argumentBytes;
    NamedAttrList attrs(func.getArgAttrDict(argument.getArgNumber()));
    attrs.set(kArgOffsetAttrName, builder.getI64IntegerAttr(argumentBytes));
    argumentAttrs.push_back(attrs.getDictionary(&getContext()));
    argumentBytes += llvm::alignTo(bytes, kAlignment);
  }
  func.setAllArgAttrs(argumentAttrs);

  // Each result takes the buffer of the argument it is the next value of,
  // or of an operand that dies at its op and that it may write over, or a
  // buffer of its own.
  int64_t end = position[terminator];
  SmallVector<Buffer> buffers;
  llvm::DenseMap<Value, int64_t> bufferOf;
  for (Operation &op : body.without_terminator()) {
    // Operands whose buffer a result of this op took.
    llvm::DenseSet<Value> taken;
    for (Value result : op.getResults()) {
      total += getTensorBytes(result.getType());
      if (donatedTo.count(result))
        continue;
      Operation *last = lastUse.lookup(result);
      int64_t resultEnd = persistent.contains(result) ? end
                          : last                      ? position[last]
                                                      : position[&op];
      std::optional<int64_t> shared;
      for (Value operand : op.getOperands())
        if (!isa<BlockArgument>(operand) && lastUse.lookup(operand) == &op &&
            !persistent.contains(operand) && !taken.contains(operand) &&
            mayWriteOver(&op, operand, result)) {
          shared = bufferOf.lookup(operand);
          taken.insert(operand);
          break;
        }
      if (shared) {
        buffers[*shared].end = std::max(buffers[*shared].end, resultEnd);
        bufferOf[result] = *shared;
        continue;
      }
      bufferOf[result] = buffers.size();
      buffers.push_back({static_cast<int64_t>(llvm::alignTo(
                             getTensorBytes(result.getType()), kAlignment)),
                         position[&op], resultEnd});
    }
  }
  int64_t resultBytes = placeBuffers(buffers, greedyWork);
  for (Operation &op : body.without_terminator()) {
    SmallVector<int64_t> offsets;
    for (Value result : op.getResults())
      offsets.push_back(donatedTo.count(result)
                            ? argumentOffset.lookup(donatedTo.lookup(result))
                            : argumentBytes +
                                  buffers[bufferOf.lookup(result)].offset);
    op.setAttr(kOpOffsetsAttrName, builder.getDenseI64ArrayAttr(offsets));
  }
  func->setAttr(kArenaBytesAttrName,
                builder.getI64IntegerAttr(argumentBytes + resultBytes));
  func->setAttr(kTensorBytesAttrName, builder.getI64IntegerAttr(total));
  if (failed(verifyMemoryPlan(func)))
    signalPassFailure();
}
