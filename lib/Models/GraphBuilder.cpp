//===- GraphBuilder.cpp - builds a model function step by step ------------===//

#include "GraphBuilder.h"

#include "parc/IR/ParcDialect.h"

using namespace mlir;
using namespace mlir::parc;

GraphBuilder::GraphBuilder(ModuleOp module, StringRef name, Type elementType)
    : b(module.getContext()), elementType(elementType),
      location(NameLoc::get(b.getStringAttr(name))) {
  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, location, name, b.getFunctionType({}, {}));
  b.setInsertionPointToStart(func.addEntryBlock());
}

Value GraphBuilder::addArgument(ArgumentRole role, StringRef name,
                                ArrayRef<int64_t> shape, Type type,
                                InitAttr init) {
  Block &entry = func.getBody().front();
  BlockArgument argument = entry.addArgument(
      RankedTensorType::get(shape, type), NameLoc::get(b.getStringAttr(name)));
  // Argument attributes are set in finish(), once the type has all inputs.
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(ParcDialect::kRoleAttrName,
                     b.getStringAttr(stringifyArgumentRole(role))),
      b.getNamedAttr(ParcDialect::kNameAttrName, b.getStringAttr(name))};
  if (init)
    attrs.push_back(b.getNamedAttr(ParcDialect::kInitAttrName, init));
  argumentAttrs.push_back(b.getDictionaryAttr(attrs));
  return argument;
}

void GraphBuilder::setCheckpointShape(ArrayRef<int64_t> shape) {
  NamedAttrList attrs(argumentAttrs.back());
  attrs.set(ParcDialect::kCheckpointShapeAttrName,
            b.getDenseI64ArrayAttr(shape));
  argumentAttrs.back() = attrs.getDictionary(b.getContext());
}

InitAttr GraphBuilder::constantInit(double value) {
  return InitAttr::get(b.getContext(), InitDistribution::Constant,
                       APFloat(value), APFloat(0.0));
}

InitAttr GraphBuilder::uniformInit(double low, double high) {
  return InitAttr::get(b.getContext(), InitDistribution::Uniform,
                       APFloat(low), APFloat(high));
}

void GraphBuilder::setScope(StringRef scope) {
  location = NameLoc::get(b.getStringAttr(scope));
}

Value GraphBuilder::linear(Value x, Value weight, Value bias) {
  Value y = MatmulOp::create(b, location, x, weight, false, false);
  return bias ? AddOp::create(b, location, y, bias) : y;
}

Value GraphBuilder::torchLinear(Value x, StringRef name, int64_t out) {
  setScope(name);
  int64_t in = cast<RankedTensorType>(x.getType()).getShape().back();
  Value weight = addParam((name + ".weight").str(), {out, in});
  Value bias = addParam((name + ".bias").str(), {out}, constantInit(0));
  Value y = MatmulOp::create(b, location, x, weight, /*transpose_lhs=*/false,
                             /*transpose_rhs=*/true);
  return AddOp::create(b, location, y, bias);
}

Value GraphBuilder::torchConv2d(Value x, StringRef name, int64_t filters,
                                int64_t kernel, int64_t stride, int64_t padding,
                                bool bias) {
  setScope(name);
  int64_t channels = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value weight =
      addParam((name + ".weight").str(), {filters, channels, kernel, kernel});
  Value y = Conv2dOp::create(
      b, location, x, weight, b.getDenseI64ArrayAttr({stride, stride}),
      b.getDenseI64ArrayAttr({padding, padding, padding, padding}),
      b.getDenseI64ArrayAttr({1, 1}), b.getI64IntegerAttr(1));
  if (!bias)
    return y;
  Value offsets = addParam((name + ".bias").str(), {filters}, constantInit(0));
  return AddOp::create(b, location, y, reshape(offsets, {filters, 1, 1}));
}

Value GraphBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x.getType()).getElementType());
  return ReshapeOp::create(b, location, type, x);
}

Value GraphBuilder::constant(ArrayRef<int64_t> shape, ArrayRef<double> values) {
  auto type = RankedTensorType::get(shape, elementType);
  const llvm::fltSemantics &semantics =
      cast<FloatType>(elementType).getFloatSemantics();
  SmallVector<APFloat> elements;
  for (double value : values) {
    APFloat element(value);
    bool losesInfo;
    element.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    elements.push_back(element);
  }
  return ConstantOp::create(b, location,
                            DenseElementsAttr::get(type, elements));
}

Value GraphBuilder::residual(Value x, Value update, StringRef name) {
  auto add = AddOp::create(b, location, x, update);
  add->setAttr(ParcDialect::kNameAttrName, b.getStringAttr(name));
  return add;
}

std::pair<Value, Value>
GraphBuilder::addTokenArguments(int64_t batch, int64_t seq, int64_t vocab) {
  Type ids = b.getI64Type();
  InitAttr tokens = uniformInit(0, vocab);
  Value inputIds =
      addArgument(ArgumentRole::Input, "input_ids", {batch, seq}, ids, tokens);
  Value labels =
      addArgument(ArgumentRole::Label, "labels", {batch, seq}, ids, tokens);
  return {inputIds, labels};
}

func::FuncOp GraphBuilder::finishLanguageModel(Value x, Value embeddings,
                                               Value labels,
                                               bool tieEmbeddings) {
  setScope("lm_head");
  Value head =
      tieEmbeddings
          ? embeddings
          : addParam("lm_head.weight",
                     cast<ShapedType>(embeddings.getType()).getShape());
  Value logits = MatmulOp::create(b, location, x, head, false,
                                  /*transpose_rhs=*/true);
  setScope("loss");
  Value loss = CrossEntropyOp::create(b, location, logits, labels);
  return finish(loss, {"loss"});
}

func::FuncOp GraphBuilder::finish(ValueRange results,
                                  ArrayRef<StringRef> names) {
  func::ReturnOp::create(b, location, results);
  Block &entry = func.getBody().front();
  func.setFunctionType(
      b.getFunctionType(entry.getArgumentTypes(), results.getTypes()));
  func.setAllArgAttrs(argumentAttrs);
  for (auto [index, name] : llvm::enumerate(names))
    func.setResultAttr(index, ParcDialect::kNameAttrName,
                       b.getStringAttr(name));
  return func;
}
