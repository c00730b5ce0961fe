//===- VerifyModel.cpp - checks the model convention ----------------------===//

#include "parc/IR/ModelConvention.h"
#include "parc/Transforms/Passes.h"

namespace mlir::parc {
#define GEN_PASS_DEF_VERIFYMODELPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {
struct VerifyModelPass
    : public parc::impl::VerifyModelPassBase<VerifyModelPass> {
  void runOnOperation() override {
    // Check every function, so one run reports every broken model.
    bool broken = false;
    for (auto func : getOperation().getOps<func::FuncOp>())
      broken |= failed(readModelArguments(func)) ||
                (!func.isExternal() && failed(checkTensorSizes(func)));
    if (broken)
      signalPassFailure();
  }
};
} // namespace
