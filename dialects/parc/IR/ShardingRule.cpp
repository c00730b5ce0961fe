//===- ShardingRule.cpp - factor-based sharding rules ---------------------===//

#include "parc/IR/ShardingRule.h"
#include "parc/IR/ParcInterfaces.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mlir::parc;

SmallVector<const TensorFactors *> ShardingRule::getTensors() const {
  SmallVector<const TensorFactors *> tensors;
  for (const TensorFactors &operand : operands)
    tensors.push_back(&operand);
  for (const TensorFactors &result : results)
    tensors.push_back(&result);
  return tensors;
}

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind,
                                bool needsLocalRewrite) {
  factors.push_back({size, kind, needsLocalRewrite});
  return factors.size() - 1;
}

/// Factor 0 is `i`, then `j`, ... `z`, then `i1`, `j1`, ...
static std::string factorName(int64_t factor) {
  std::string name(1, static_cast<char>('i' + factor % 18));
  if (factor >= 18)
    name += std::to_string(factor / 18);
  return name;
}

static void printTensors(llvm::raw_ostream &os,
                         ArrayRef<TensorFactors> tensors) {
  os << "(";
  llvm::interleaveComma(tensors, os, [&](const TensorFactors &tensor) {
    os << "[";
    llvm::interleaveComma(tensor, os, [&](const DimFactors &dim) {
      if (dim.empty())
        os << "_";
      llvm::interleave(
          dim, os, [&](int64_t factor) { os << factorName(factor); }, "*");
    });
    os << "]";
  });
  os << ")";
}

void ShardingRule::print(llvm::raw_ostream &os) const {
  printTensors(os, operands);
  os << " -> ";
  printTensors(os, results);
  os << " {";
  for (auto [index, factor] : llvm::enumerate(factors)) {
    os << (index ? ", " : "") << factorName(index) << "=" << factor.size;
    if (factor.kind == FactorKind::Reduction)
      os << " reduction";
    if (factor.kind == FactorKind::Replicated)
      os << " replicated";
    if (factor.needsLocalRewrite)
      os << " local-rewrite";
  }
  os << "}";
}

ShardingRuleBuilder::ShardingRuleBuilder(ArrayRef<int64_t> shape)
    : shape(shape) {
  for (int64_t size : shape)
    shapeFactors.push_back(rule.addFactor(size, FactorKind::Parallel));
}

ShardingRuleBuilder &
ShardingRuleBuilder::addBroadcastTensor(ArrayRef<int64_t> tensorShape,
                                        bool isResult) {
  TensorFactors dims;
  int64_t offset = shape.size() - tensorShape.size();
  for (auto [dim, size] : llvm::enumerate(tensorShape)) {
    // A size-1 dimension that stretches spans no factor: each rank keeps
    // the single element whatever the factor's sharding.
    if (size == 1 && shape[offset + dim] != 1)
      dims.emplace_back();
    else
      dims.push_back({shapeFactors[offset + dim]});
  }
  if (isResult)
    rule.addResult(std::move(dims));
  else
    rule.addOperand(std::move(dims));
  return *this;
}

ShardingRuleBuilder &ShardingRuleBuilder::setKind(int64_t dim,
                                                  FactorKind kind) {
  rule.setKind(shapeFactors[dim], kind);
  return *this;
}

ShardingRule mlir::parc::getBroadcastShardingRule(Operation *op) {
  auto resultType = cast<ShapedType>(op->getResult(0).getType());
  ShardingRuleBuilder builder(resultType.getShape());
  for (Type type : op->getOperandTypes())
    builder.addBroadcastTensor(cast<ShapedType>(type).getShape(),
                               /*isResult=*/false);
  for (Type type : op->getResultTypes())
    builder.addBroadcastTensor(cast<ShapedType>(type).getShape(),
                               /*isResult=*/true);
  return builder.build();
}
