//===- PrintModelStats.cpp - prints a model's size and cost ---------------===//

#include "parc/Models/ModelStats.h"
#include "parc/Transforms/Passes.h"

namespace mlir::parc {
#define GEN_PASS_DEF_PRINTMODELSTATSPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {
struct PrintModelStatsPass
    : public parc::impl::PrintModelStatsPassBase<PrintModelStatsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      llvm::outs() << "function @" << func.getSymName() << "\n";
      printModelStats(computeModelStats(func), llvm::outs());
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
