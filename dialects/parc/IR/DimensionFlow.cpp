//===- DimensionFlow.cpp - which dimensions derive from given ones --------===//

#include "parc/IR/DimensionFlow.h"

#include "parc/IR/ParcInterfaces.h"

using namespace mlir;
using namespace mlir::parc;

DimensionFlow
mlir::parc::followDimensions(Block &body,
                             ArrayRef<std::pair<Value, SmallVector<bool>>> seeds) {
  DimensionFlow flow;
  for (const auto &[value, dims] : seeds)
    flow.dims[value] = dims;
  for (Operation &op : body) {
    auto ruleOp = dyn_cast<ShardingRuleOpInterface>(op);
    if (!ruleOp) {
      if (op.getNumOperands() == 1 && op.getNumResults() == 1 &&
          op.getOperand(0).getType() == op.getResult(0).getType())
        if (auto it = flow.dims.find(op.getOperand(0)); it != flow.dims.end())
          flow.dims[op.getResult(0)] = SmallVector<bool>(it->second);
      continue;
    }
    ShardingRule rule = ruleOp.getShardingRule();
    SmallVector<bool> factors(rule.getFactors().size(), false);
    for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
      auto it = flow.dims.find(operand);
      if (it == flow.dims.end())
        continue;
      for (auto [dim, dimFactors] : llvm::enumerate(rule.getOperands()[index]))
        if (dim < it->second.size() && it->second[dim])
          for (int64_t factor : dimFactors)
            factors[factor] = true;
    }
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      SmallVector<bool> dims;
      for (const DimFactors &dimFactors : rule.getResults()[index])
        dims.push_back(llvm::any_of(
            dimFactors, [&](int64_t factor) { return factors[factor]; }));
      flow.dims[result] = std::move(dims);
    }
    flow.factors[&op] = std::move(factors);
  }
  return flow;
}
