//===- PrintShardingRules.cpp - shows each op's sharding rule -------------===//

#include "parc/IR/ParcInterfaces.h"
#include "parc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::parc {
#define GEN_PASS_DEF_PRINTSHARDINGRULESPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {
struct PrintShardingRulesPass
    : public parc::impl::PrintShardingRulesPassBase<PrintShardingRulesPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation()->walk([&](ShardingRuleOpInterface op) {
      std::string text;
      llvm::raw_string_ostream os(text);
      op.getShardingRule().print(os);
      op->setAttr("parc.sharding_rule", builder.getStringAttr(text));
    });
  }
};
} // namespace
