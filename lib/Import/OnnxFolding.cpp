//===- OnnxFolding.cpp - ONNX shape arithmetic evaluated at import --------===//
//
// Exporters leave shape arithmetic in the graph (Shape, Gather, Concat,
// ConstantOfShape, Equal, Where, Range, ...) that is constant once the
// input shapes are static, as parc's always are. A node whose inputs are
// all known (initializers that are not parameters, Constant nodes, results
// folded before it), or a Shape or Size of any typed value, is evaluated
// here into a known tensor instead of becoming ops. Integers are computed
// in int64 (wrapping as two's complement), floats in double rounded to
// their element type after each node.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace mlir::parc;
using namespace mlir::parc::onnx_import;

/// Folding builds no tensor larger than this: a constant that large is
/// data, not shape arithmetic.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

// clang-format off
static const StringRef kFoldedOps[] = {
    "Abs",   "Add",   "And",      "Cast",           "Ceil",      "Concat",
    "ConstantOfShape", "Cos",     "Div",            "Equal",     "Exp",
    "Expand", "Floor", "Gather",  "GatherElements", "Greater",
    "GreaterOrEqual",
    "Identity", "Less", "LessOrEqual", "Log",       "Max",       "Min",
    "Mod",   "Mul",   "Neg",      "Not",            "Or",        "Pow",
    "Range", "Reciprocal", "Reshape", "Shape",      "Sin",       "Size",
    "Slice", "Sqrt",  "Squeeze",  "Sub",            "Transpose", "Trilu",
    "Unsqueeze", "Where", "Xor"};
// clang-format on

ArrayRef<StringRef> Importer::getFoldedOps() { return kFoldedOps; }

/// The element count of `shape`, or -1 when it is negative somewhere or
/// over kMaxFoldedElements.
static int64_t countElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t size : shape) {
    if (size < 0 || (size > 0 && count > kMaxFoldedElements / size))
      return -1;
    count *= size;
  }
  return count;
}

/// `value` rounded to the float type `type` (to nearest even).
static double roundTo(double value, Type type) {
  if (type.isF64() || std::isnan(value))
    return value;
  APFloat rounded(value);
  bool lost;
  rounded.convert(cast<FloatType>(type).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &lost);
  return rounded.convertToDouble();
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Numpy broadcasting of `shapes`; nullopt when they do not broadcast.
static std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  SmallVector<int64_t> result(rank, 1);
  for (ArrayRef<int64_t> shape : shapes)
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &out = result[rank - shape.size() + i];
      if (shape[i] == out || shape[i] == 1)
        continue;
      if (out != 1)
        return std::nullopt;
      out = shape[i];
    }
  return result;
}

/// The element of a tensor of `shape`, broadcast to `out`, that element
/// `flat` of `out` reads.
static int64_t broadcastIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> out,
                              ArrayRef<int64_t> outStrides, int64_t flat) {
  int64_t index = 0, stride = 1;
  size_t offset = out.size() - shape.size();
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    int64_t coordinate = (flat / outStrides[d + offset]) % out[d + offset];
    if (shape[d] != 1)
      index += coordinate * stride;
    stride *= shape[d];
  }
  return index;
}

/// A tensor of `type` whose element i is `element(i)` (as double for a
/// float type, int64 for an integer one).
template <typename Element>
static KnownTensor makeTensor(RankedTensorType type, int64_t count,
                              Element &&element) {
  KnownTensor result{type, {}, {}};
  bool integer = result.isInteger();
  for (int64_t i = 0; i < count; ++i) {
    auto value = element(i);
    if (integer)
      result.integers.push_back(static_cast<int64_t>(value));
    else
      result.values.push_back(
          roundTo(static_cast<double>(value), type.getElementType()));
  }
  return result;
}

/// A tensor of `type` whose element i is element `source(i).second` of
/// tensor `source(i).first`, copied exactly.
template <typename Source>
static KnownTensor copyElements(RankedTensorType type, int64_t count,
                                Source &&source) {
  KnownTensor result{type, {}, {}};
  for (int64_t i = 0; i < count; ++i) {
    auto [tensor, index] = source(i);
    if (result.isInteger())
      result.integers.push_back(tensor->integers[index]);
    else
      result.values.push_back(tensor->values[index]);
  }
  return result;
}

/// Min, Max and the comparisons (1 or 0) of `x` and `y`; nullopt for any
/// other op.
template <typename T> static std::optional<T> order(StringRef op, T x, T y) {
  if (op == "Min")
    return std::min(x, y);
  if (op == "Max")
    return std::max(x, y);
  if (op == "Equal")
    return x == y;
  if (op == "Less")
    return x < y;
  if (op == "LessOrEqual")
    return x <= y;
  if (op == "Greater")
    return x > y;
  if (op == "GreaterOrEqual")
    return x >= y;
  return std::nullopt;
}

/// Wrapping int64 arithmetic (no undefined overflow).
static int64_t wrap(uint64_t value) { return static_cast<int64_t>(value); }

FailureOr<bool> Importer::foldNode(const onnx::NodeProto &node) {
  StringRef op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return false;
  if (!llvm::is_contained(kFoldedOps, op) || node.output_size() != 1)
    return false;
  // Shape and Size read only their input's type.
  if (op == "Shape" || op == "Size") {
    if (!hasOperand(node, 0))
      return false;
    RankedTensorType type;
    if (auto value = values.find(node.input(0)); value != values.end())
      type = cast<RankedTensorType>(value->second.getType());
    else if (auto tensor = known.find(node.input(0)); tensor != known.end())
      type = tensor->second.type;
    else
      return false;
    ArrayRef<int64_t> shape = type.getShape();
    auto i64 = [&](ArrayRef<int64_t> dims) {
      return RankedTensorType::get(dims, builder.getI64Type());
    };
    if (op == "Size") {
      known[node.output(0)] = {i64({}), {}, {type.getNumElements()}};
      return true;
    }
    int64_t rank = type.getRank();
    auto clampAxis = [&](int64_t axis) {
      if (axis < 0)
        axis += rank;
      return std::clamp<int64_t>(axis, 0, rank);
    };
    int64_t start = clampAxis(intAttr(node, "start", 0));
    int64_t end = clampAxis(intAttr(node, "end", rank));
    SmallVector<int64_t> dims(shape.begin() + start,
                              shape.begin() + std::max(start, end));
    known[node.output(0)] = {i64({static_cast<int64_t>(dims.size())}),
                             {},
                             std::vector<int64_t>(dims.begin(), dims.end())};
    return true;
  }

  // Every other op needs every input it is given known, and none of them a
  // parameter (folding would freeze a weight).
  SmallVector<const KnownTensor *> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto tensor = known.find(node.input(i));
    if (tensor == known.end() || parameters.contains(node.input(i)))
      return false;
    inputs.push_back(&tensor->second);
  }
  if (inputs.empty() || !inputs[0])
    return false;
  const KnownTensor &first = *inputs[0];
  auto fail = [&]() { return nodeError(node); };
  auto define = [&](KnownTensor tensor) {
    known[node.output(0)] = std::move(tensor);
    return true;
  };
  auto intsOf = [&](int index) -> std::optional<SmallVector<int64_t>> {
    if (index >= static_cast<int>(inputs.size()) || !inputs[index])
      return std::nullopt;
    return SmallVector<int64_t>(inputs[index]->integers.begin(),
                                inputs[index]->integers.end());
  };
  // Shape-like operands (indices, shapes, axes, bounds) hold integers.
  for (int i = 1; i < static_cast<int>(inputs.size()); ++i)
    if (inputs[i] && !inputs[i]->isInteger() &&
        llvm::is_contained(
            {"Gather", "Reshape", "Expand", "Unsqueeze", "Squeeze", "Slice"},
            op))
      return fail() << "input " << i << " must hold integers";

  // Elementwise ops with numpy broadcasting: `build(type, count, at)`
  // makes the result, `at(i)` giving the element of each input that
  // element i reads.
  auto broadcast = [&](Type element, auto &&build) -> FailureOr<bool> {
    SmallVector<ArrayRef<int64_t>> shapes;
    for (const KnownTensor *input : inputs)
      if (input)
        shapes.push_back(input->type.getShape());
    std::optional<SmallVector<int64_t>> shape = broadcastShapes(shapes);
    if (!shape)
      return fail() << "its input shapes do not broadcast";
    int64_t count = countElements(*shape);
    if (count < 0)
      return false;
    SmallVector<int64_t> strides = stridesOf(*shape);
    auto at = [&](int64_t i) {
      SmallVector<int64_t, 3> indices;
      for (const KnownTensor *input : inputs)
        indices.push_back(
            input ? broadcastIndex(input->type.getShape(), *shape, strides, i)
                  : 0);
      return indices;
    };
    return build(RankedTensorType::get(*shape, element), count, at);
  };
  auto elementwise = [&](Type element, auto &&compute) -> FailureOr<bool> {
    return broadcast(element,
                     [&](RankedTensorType type, int64_t count,
                         auto &&at) -> FailureOr<bool> {
                       std::string error;
                       KnownTensor result =
                           makeTensor(type, count, [&](int64_t i) {
                             return compute(at(i), error);
                           });
                       if (!error.empty())
                         return fail() << error;
                       return define(std::move(result));
                     });
  };
  Type element = first.type.getElementType();
  Type boolean = builder.getI32Type(); // BOOL as INT32
  bool integer = first.isInteger();

  if (llvm::is_contained({"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Min",
                          "Max", "Equal", "Less", "LessOrEqual", "Greater",
                          "GreaterOrEqual", "And", "Or", "Xor"},
                         op)) {
    if (inputs.size() != 2 || !inputs[1])
      return false;
    const KnownTensor &a = *inputs[0], &b = *inputs[1];
    // Pow's exponent may have a type of its own; an integer base with a
    // float exponent is not folded.
    if (a.type.getElementType() != b.type.getElementType() &&
        !(op == "Pow" && !integer))
      return op == "Pow"
                 ? FailureOr<bool>(false)
                 : FailureOr<bool>(fail() << "its inputs have different "
                                             "element types");
    bool compares =
        llvm::is_contained({"Equal", "Less", "LessOrEqual", "Greater",
                            "GreaterOrEqual", "And", "Or", "Xor"},
                           op);
    bool fmod = intAttr(node, "fmod", 0) != 0;
    if (integer) {
      return elementwise(
          compares ? boolean : element,
          [&](ArrayRef<int64_t> at, std::string &error) -> int64_t {
            int64_t x = a.integers[at[0]], y = b.integers[at[1]];
            uint64_t ux = x, uy = y;
            if (op == "Add")
              return wrap(ux + uy);
            if (op == "Sub")
              return wrap(ux - uy);
            if (op == "Mul")
              return wrap(ux * uy);
            if (op == "Div" || op == "Mod") {
              if (y == 0) {
                error = "divides an integer by zero";
                return 0;
              }
              if (y == -1) // INT64_MIN / -1 overflows
                return op == "Div" ? wrap(0 - ux) : 0;
              if (op == "Div")
                return x / y;
              int64_t r = x % y;
              // Without fmod the remainder takes the divisor's sign.
              return !fmod && r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
            }
            if (op == "Pow") {
              if (y < 0) {
                error = "raises an integer to a negative power";
                return 0;
              }
              uint64_t power = 1, base = ux;
              for (int64_t e = y; e > 0; e >>= 1, base *= base)
                if (e & 1)
                  power *= base;
              return wrap(power);
            }
            if (std::optional<int64_t> ordered = order(op, x, y))
              return *ordered;
            if (op == "And")
              return x && y;
            if (op == "Or")
              return x || y;
            return (x != 0) != (y != 0); // Xor
          });
    }
    if (llvm::is_contained({"And", "Or", "Xor"}, op))
      return fail() << "'" << op << "' takes booleans, not floats";
    return elementwise(
        compares ? boolean : element,
        [&](ArrayRef<int64_t> at, std::string &) -> double {
          double x = a.values[at[0]], y = b.at(at[1]);
          if (op == "Add")
            return x + y;
          if (op == "Sub")
            return x - y;
          if (op == "Mul")
            return x * y;
          if (op == "Div")
            return x / y;
          if (op == "Mod")
            return fmod ? std::fmod(x, y) : x - y * std::floor(x / y);
          if (op == "Pow")
            return std::pow(x, y);
          // Min and Max carry a NaN, as numpy's do.
          if ((op == "Min" || op == "Max") && (std::isnan(x) || std::isnan(y)))
            return x + y;
          return *order(op, x, y);
        });
  }

  if (llvm::is_contained({"Neg", "Abs", "Not", "Floor", "Ceil", "Sqrt",
                          "Reciprocal", "Exp", "Log", "Cos", "Sin", "Identity"},
                         op)) {
    if (op == "Identity")
      return define(first);
    if (integer)
      return elementwise(
          element, [&](ArrayRef<int64_t> at, std::string &error) {
            int64_t x = first.integers[at[0]];
            if (op == "Neg")
              return wrap(0 - static_cast<uint64_t>(x));
            if (op == "Abs")
              return x < 0 ? wrap(0 - static_cast<uint64_t>(x)) : x;
            if (op == "Not")
              return static_cast<int64_t>(x == 0);
            if (op == "Floor" || op == "Ceil")
              return x;
            error = "'" + op.str() + "' takes floats";
            return int64_t(0);
          });
    if (op == "Not")
      return fail() << "'Not' takes booleans, not floats";
    return elementwise(element, [&](ArrayRef<int64_t> at, std::string &) {
      double x = first.values[at[0]];
      if (op == "Neg")
        return -x;
      if (op == "Abs")
        return std::fabs(x);
      if (op == "Floor")
        return std::floor(x);
      if (op == "Ceil")
        return std::ceil(x);
      if (op == "Sqrt")
        return std::sqrt(x);
      if (op == "Reciprocal")
        return 1.0 / x;
      if (op == "Exp")
        return std::exp(x);
      if (op == "Log")
        return std::log(x);
      if (op == "Cos")
        return std::cos(x);
      return std::sin(x);
    });
  }

  if (op == "Where") {
    if (inputs.size() != 3 || !inputs[1] || !inputs[2])
      return false;
    const KnownTensor &x = *inputs[1], &y = *inputs[2];
    if (!first.isInteger())
      return fail() << "its condition must hold booleans";
    if (x.type.getElementType() != y.type.getElementType())
      return fail() << "its two branches have different element types";
    return broadcast(x.type.getElementType(), [&](RankedTensorType type,
                                                  int64_t count, auto &&at) {
      return define(copyElements(type, count, [&](int64_t i) {
        SmallVector<int64_t, 3> indices = at(i);
        return first.integers[indices[0]] ? std::make_pair(&x, indices[1])
                                          : std::make_pair(&y, indices[2]);
      }));
    });
  }

  if (op == "Cast") {
    const onnx::AttributeProto *to = attribute(node, "to");
    if (!to)
      return fail() << "has no 'to' attribute";
    FailureOr<Type> target =
        elementType(to->i(), "the 'to' of Cast node '" + node.name() + "'");
    if (failed(target))
      return failure();
    bool toBoolean = to->i() == onnx::TensorProto::BOOL;
    auto type = RankedTensorType::get(first.type.getShape(), *target);
    KnownTensor result{type, {}, {}};
    for (int64_t i = 0; i < first.size(); ++i) {
      double value = first.at(i);
      if (!result.isInteger()) {
        result.values.push_back(roundTo(value, *target));
        continue;
      }
      if (first.isInteger()) {
        int64_t v = first.integers[i];
        result.integers.push_back(toBoolean ? v != 0
                                  : target->isInteger(32)
                                      ? static_cast<int32_t>(v)
                                      : v);
        continue;
      }
      if (toBoolean) {
        result.integers.push_back(value != 0);
        continue;
      }
      // Float to integer truncates toward zero. ONNX leaves out-of-range
      // values (inf, NaN) undefined; they become the type's minimum, as
      // x86's conversion and so PyTorch on the CPU give them (T5's
      // relative-position buckets cast log(0) = -inf and mask it off).
      bool narrow = target->isInteger(32);
      double limit = narrow ? 2147483648.0 : 9223372036854775808.0;
      int64_t minimum = narrow ? std::numeric_limits<int32_t>::min()
                               : std::numeric_limits<int64_t>::min();
      result.integers.push_back(value > -limit - 1 && value < limit
                                    ? static_cast<int64_t>(std::trunc(value))
                                    : minimum);
    }
    return define(std::move(result));
  }

  if (op == "ConstantOfShape") {
    std::optional<SmallVector<int64_t>> shape = intsOf(0);
    if (!shape || !first.isInteger())
      return fail() << "its shape must hold integers";
    int64_t count = countElements(*shape);
    if (count < 0)
      return false;
    KnownTensor fill{
        RankedTensorType::get({}, builder.getF32Type()), {0.0}, {}};
    if (const onnx::AttributeProto *value = attribute(node, "value")) {
      FailureOr<KnownTensor> read =
          readTensor(value->t(),
                     "the value of ConstantOfShape node '" + node.name() + "'");
      if (failed(read))
        return failure();
      if (read->size() != 1)
        return fail() << "its value must hold one element";
      fill = *read;
    }
    auto type = RankedTensorType::get(*shape, fill.type.getElementType());
    return define(copyElements(type, count, [&](int64_t) {
      return std::make_pair(&fill, int64_t(0));
    }));
  }

  if (op == "Range") {
    if (inputs.size() != 3 || !inputs[1] || !inputs[2])
      return false;
    if (first.size() != 1 || inputs[1]->size() != 1 || inputs[2]->size() != 1)
      return fail() << "start, limit and delta must be scalars";
    if (inputs[1]->type.getElementType() != element ||
        inputs[2]->type.getElementType() != element)
      return fail() << "start, limit and delta must have one element type";
    double start = first.at(0), limit = inputs[1]->at(0),
           delta = inputs[2]->at(0);
    if (delta == 0)
      return fail() << "its delta is 0";
    double steps = std::ceil((limit - start) / delta);
    if (!(steps < static_cast<double>(kMaxFoldedElements)))
      return false;
    int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
    auto type = RankedTensorType::get({count}, element);
    if (integer) {
      int64_t s = first.integers[0], d = inputs[2]->integers[0];
      return define(makeTensor(type, count, [&](int64_t i) {
        return wrap(static_cast<uint64_t>(s) +
                    static_cast<uint64_t>(d) * static_cast<uint64_t>(i));
      }));
    }
    return define(
        makeTensor(type, count, [&](int64_t i) { return start + i * delta; }));
  }

  // Layout ops: the result's element `i` is the input's element `source(i)`.
  auto gather = [&](ArrayRef<int64_t> shape, auto &&source) -> FailureOr<bool> {
    int64_t count = countElements(shape);
    if (count < 0)
      return false;
    auto type = RankedTensorType::get(shape, element);
    return define(copyElements(type, count, [&](int64_t i) {
      return std::make_pair(&first, static_cast<int64_t>(source(i)));
    }));
  };
  ArrayRef<int64_t> shape = first.type.getShape();
  int64_t rank = first.type.getRank();
  auto axisIn = [&](int64_t axis, int64_t bound) -> std::optional<int64_t> {
    if (axis < -bound || axis >= bound)
      return std::nullopt;
    return axis < 0 ? axis + bound : axis;
  };

  if (op == "Reshape" || op == "Unsqueeze" || op == "Squeeze") {
    SmallVector<int64_t> result;
    if (op == "Reshape") {
      std::optional<SmallVector<int64_t>> spec = intsOf(1);
      if (!spec)
        return false;
      bool allowZero = intAttr(node, "allowzero", 0) != 0;
      int64_t inferred = -1, product = 1;
      for (auto [i, size] : llvm::enumerate(*spec)) {
        if (size == 0 && !allowZero) {
          if (static_cast<int64_t>(i) >= rank)
            return fail() << "copies dimension " << i << ", which "
                          << first.type << " lacks";
          size = shape[i];
        }
        if (size == -1) {
          if (inferred >= 0)
            return fail() << "infers more than one dimension";
          inferred = i;
        } else if (size < 0) {
          return fail() << "has a negative size " << size;
        } else {
          product *= size;
        }
        result.push_back(size);
        if (countElements(result) < 0)
          return false;
      }
      if (inferred >= 0) {
        if (product == 0 || first.size() % product != 0)
          return fail() << "cannot infer a dimension";
        result[inferred] = first.size() / product;
      }
      if (countElements(result) != first.size())
        return fail() << "reshapes " << first.size() << " elements into "
                      << countElements(result);
    } else {
      std::optional<SmallVector<int64_t>> axes = intsOf(1);
      if (!axes)
        axes = intsAttr(node, "axes");
      int64_t outRank =
          op == "Unsqueeze" ? rank + (axes ? axes->size() : 0) : rank;
      SmallVector<bool> marked(outRank, false);
      for (int64_t axis : axes.value_or(SmallVector<int64_t>())) {
        std::optional<int64_t> at = axisIn(axis, outRank);
        if (!at || marked[*at])
          return fail() << "has an axis " << axis << " out of range or twice";
        marked[*at] = true;
      }
      if (op == "Unsqueeze") {
        for (int64_t d = 0, in = 0; d < outRank; ++d)
          result.push_back(marked[d] ? 1 : shape[in++]);
      } else {
        for (int64_t d = 0; d < rank; ++d) {
          bool squeezed = axes ? marked[d] : shape[d] == 1;
          if (squeezed && shape[d] != 1)
            return fail() << "squeezes dimension " << d << " of size "
                          << shape[d];
          if (!squeezed)
            result.push_back(shape[d]);
        }
      }
    }
    return gather(result, [](int64_t i) { return i; });
  }

  if (op == "Transpose") {
    SmallVector<int64_t> perm;
    if (std::optional<SmallVector<int64_t>> given = intsAttr(node, "perm"))
      perm = *given;
    else
      for (int64_t d = rank - 1; d >= 0; --d)
        perm.push_back(d);
    SmallVector<int64_t> sorted(perm);
    llvm::sort(sorted);
    if (static_cast<int64_t>(perm.size()) != rank ||
        sorted != llvm::to_vector(llvm::seq<int64_t>(0, rank)))
      return fail() << "has a perm that is not a permutation of its dimensions";
    SmallVector<int64_t> result, inStrides = stridesOf(shape);
    for (int64_t d : perm)
      result.push_back(shape[d]);
    SmallVector<int64_t> outStrides = stridesOf(result);
    return gather(result, [&](int64_t i) {
      int64_t from = 0;
      for (int64_t d = 0; d < rank; ++d)
        from += (i / outStrides[d]) % result[d] * inStrides[perm[d]];
      return from;
    });
  }

  if (op == "Expand") {
    std::optional<SmallVector<int64_t>> target = intsOf(1);
    if (!target)
      return false;
    std::optional<SmallVector<int64_t>> result =
        broadcastShapes({shape, *target});
    if (!result)
      return fail() << "cannot expand " << first.type;
    if (countElements(*result) < 0)
      return false;
    SmallVector<int64_t> strides = stridesOf(*result);
    return gather(*result, [&](int64_t i) {
      return broadcastIndex(shape, *result, strides, i);
    });
  }

  // BERT's token type ids: a constant buffer gathered by position.
  if (op == "GatherElements") {
    std::optional<SmallVector<int64_t>> indices = intsOf(1);
    if (!indices)
      return false;
    ArrayRef<int64_t> indexShape = inputs[1]->type.getShape();
    std::optional<int64_t> axis = axisIn(intAttr(node, "axis", 0), rank);
    if (!axis)
      return fail() << "has an axis out of range";
    if (static_cast<int64_t>(indexShape.size()) != rank)
      return fail() << "its indices have rank " << indexShape.size()
                    << ", its data " << rank;
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && indexShape[d] > shape[d])
        return fail() << "its indices' dimension " << d << " (" << indexShape[d]
                      << ") exceeds the data's (" << shape[d] << ")";
    for (int64_t index : *indices)
      if (index < -shape[*axis] || index >= shape[*axis])
        return fail() << "index " << index << " is out of range [-"
                      << shape[*axis] << ", " << shape[*axis] << ")";
    SmallVector<int64_t> outStrides = stridesOf(indexShape),
                         inStrides = stridesOf(shape);
    return gather(indexShape, [&](int64_t i) {
      int64_t from = 0;
      for (int64_t d = 0; d < rank; ++d) {
        int64_t coordinate = (i / outStrides[d]) % indexShape[d];
        if (d == *axis) {
          coordinate = (*indices)[i];
          if (coordinate < 0)
            coordinate += shape[d];
        }
        from += coordinate * inStrides[d];
      }
      return from;
    });
  }

  // A causal mask built from a constant (torch.tril of ones).
  if (op == "Trilu") {
    if (rank < 2)
      return fail() << "input has rank < 2";
    int64_t k = 0;
    if (std::optional<SmallVector<int64_t>> given = intsOf(1)) {
      if (given->size() != 1)
        return fail() << "its k must hold one integer";
      k = (*given)[0];
    }
    bool upper = intAttr(node, "upper", 1) != 0;
    int64_t rows = shape[rank - 2], cols = shape[rank - 1];
    KnownTensor out = first;
    for (int64_t n = 0; n < first.size(); ++n) {
      int64_t i = n / cols % rows, j = n % cols;
      if (upper ? j - i < k : j - i > k) {
        if (first.isInteger())
          out.integers[n] = 0;
        else
          out.values[n] = 0.0;
      }
    }
    return define(std::move(out));
  }

  if (op == "Concat") {
    std::optional<int64_t> axis = axisIn(intAttr(node, "axis", 0), rank);
    if (!axis)
      return fail() << "has an axis out of range";
    SmallVector<int64_t> result(shape);
    result[*axis] = 0;
    for (const KnownTensor *input : inputs) {
      if (!input)
        continue;
      ArrayRef<int64_t> other = input->type.getShape();
      if (input->type.getElementType() != element ||
          other.size() != shape.size())
        return fail() << "concatenates tensors of different ranks or types";
      for (int64_t d = 0; d < rank; ++d)
        if (d != *axis && other[d] != shape[d])
          return fail() << "concatenates tensors whose dimension " << d
                        << " differs";
      result[*axis] += other[*axis];
    }
    int64_t count = countElements(result);
    if (count < 0)
      return false;
    int64_t inner = 1;
    for (int64_t d = *axis + 1; d < rank; ++d)
      inner *= shape[d];
    KnownTensor out{RankedTensorType::get(result, element), {}, {}};
    int64_t outer = count / std::max<int64_t>(1, result[*axis] * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (const KnownTensor *input : inputs) {
        if (!input)
          continue;
        int64_t block = input->type.getDimSize(*axis) * inner;
        for (int64_t j = 0; j < block; ++j) {
          if (integer)
            out.integers.push_back(input->integers[o * block + j]);
          else
            out.values.push_back(input->values[o * block + j]);
        }
      }
    return define(std::move(out));
  }

  if (op == "Gather") {
    std::optional<SmallVector<int64_t>> indices = intsOf(1);
    if (!indices)
      return false;
    std::optional<int64_t> axis = axisIn(intAttr(node, "axis", 0), rank);
    if (!axis)
      return fail() << "has an axis out of range";
    ArrayRef<int64_t> indexShape = inputs[1]->type.getShape();
    SmallVector<int64_t> result(shape.begin(), shape.begin() + *axis);
    result.append(indexShape.begin(), indexShape.end());
    result.append(shape.begin() + *axis + 1, shape.end());
    int64_t size = shape[*axis], inner = 1;
    for (int64_t d = *axis + 1; d < rank; ++d)
      inner *= shape[d];
    for (int64_t &index : *indices) {
      if (index < -size || index >= size)
        return fail() << "index " << index << " is out of range [" << -size
                      << ", " << size << ")";
      if (index < 0)
        index += size;
    }
    int64_t count = static_cast<int64_t>(indices->size());
    return gather(result, [&](int64_t i) {
      int64_t j = i % inner, rest = i / inner;
      int64_t k = rest % count, o = rest / count;
      return (o * size + (*indices)[k]) * inner + j;
    });
  }

  if (op == "Slice") {
    std::optional<SmallVector<int64_t>> starts = intsOf(1), ends = intsOf(2),
                                        axes = intsOf(3), steps = intsOf(4);
    if (!starts || !ends)
      return false;
    if (!axes)
      axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
    if (!steps)
      steps = SmallVector<int64_t>(starts->size(), 1);
    if (ends->size() != starts->size() || axes->size() != starts->size() ||
        steps->size() != starts->size())
      return fail() << "starts, ends, axes and steps differ in length";
    SmallVector<int64_t> begin(rank, 0), step(rank, 1), result(shape);
    for (size_t i = 0; i < starts->size(); ++i) {
      std::optional<int64_t> axis = axisIn((*axes)[i], rank);
      int64_t s = (*steps)[i];
      if (!axis || s == 0)
        return fail() << "slices axis " << (*axes)[i] << " with step " << s;
      int64_t size = shape[*axis];
      // ONNX's clamping: negative positions count from the end; starts
      // clamp to [0, size] ([0, size - 1] stepping back), ends likewise
      // ([-1, size - 1] stepping back).
      auto position = [&](int64_t v, bool isEnd) -> int64_t {
        if (size == 0)
          return 0;
        if (v < 0)
          v = v < -size ? (s > 0 || !isEnd ? 0 : -1) : v + size;
        if (s > 0)
          return std::clamp<int64_t>(v, 0, size);
        return std::clamp<int64_t>(v, isEnd ? -1 : 0, size - 1);
      };
      int64_t from = position((*starts)[i], false);
      int64_t to = position((*ends)[i], true);
      int64_t count =
          s > 0 ? (to - from + s - 1) / s : (from - to - s - 1) / -s;
      begin[*axis] = from;
      step[*axis] = s;
      result[*axis] = std::max<int64_t>(0, count);
    }
    SmallVector<int64_t> inStrides = stridesOf(shape),
                         outStrides = stridesOf(result);
    return gather(result, [&](int64_t i) {
      int64_t from = 0;
      for (int64_t d = 0; d < rank; ++d)
        from += (begin[d] + (i / outStrides[d]) % result[d] * step[d]) *
                inStrides[d];
      return from;
    });
  }
  return false;
}
