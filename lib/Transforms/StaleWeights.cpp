//===- StaleWeights.cpp - PipeDream-2BW's two weight versions -------------===//

#include "parc/Transforms/StaleWeights.h"

#include "parc/IR/ModelConvention.h"
#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcInterfaces.h"

using namespace mlir;
using namespace mlir::parc;

LogicalResult mlir::parc::addStaleWeightVersions(func::FuncOp func) {
  SmallVector<BlockArgument> updated;
  WalkResult walk = func.walk([&](OptimizerUpdateOpInterface update) {
    BlockArgument parameter =
        getSteppedParameter(func, update.getUpdatedParameter());
    if (!parameter) {
      update->emitOpError("updates a parameter that is not an argument of @")
          << func.getSymName() << ", which PipeDream-2BW cannot version";
      return WalkResult::interrupt();
    }
    if (!llvm::is_contained(updated, parameter))
      updated.push_back(parameter);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  MLIRContext *context = func.getContext();
  Builder builder(context);
  Operation *terminator = func.getBody().front().getTerminator();
  for (BlockArgument parameter : updated) {
    unsigned index = parameter.getArgNumber();
    auto name =
        func.getArgAttrOfType<StringAttr>(index, ParcDialect::kNameAttrName);
    if (!name)
      return emitError(parameter.getLoc(), "an updated parameter needs a '")
             << ParcDialect::kNameAttrName << "'";
    StringAttr staleName =
        builder.getStringAttr(name.getValue() + kStaleSuffix);
    // The parameter's layout (plan sharding) and checkpoint shape carry
    // over; the prologue sets its value.
    NamedAttrList attrs(func.getArgAttrDict(index));
    attrs.set(ParcDialect::kRoleAttrName, builder.getStringAttr("carry"));
    attrs.set(ParcDialect::kNameAttrName, staleName);
    attrs.set(ParcDialect::kInitAttrName,
              InitAttr::get(context, InitDistribution::Constant, APFloat(0.0),
                            APFloat(0.0)));
    attrs.set(kStaleOfAttrName, name);
    unsigned staleIndex = func.getNumArguments();
    if (failed(func.insertArgument(staleIndex, parameter.getType(),
                                   attrs.getDictionary(context),
                                   parameter.getLoc())))
      return failure();
    BlockArgument stale = func.getArgument(staleIndex);
    parameter.replaceUsesWithIf(stale, [](OpOperand &use) {
      return getPhase(use.getOwner()) != Phase::Update;
    });
    unsigned resultIndex = func.getNumResults();
    terminator->insertOperands(terminator->getNumOperands(), {parameter});
    if (failed(func.insertResult(resultIndex, parameter.getType(),
                                 builder.getDictionaryAttr(builder.getNamedAttr(
                                     ParcDialect::kNameAttrName, staleName)))))
      return failure();
  }
  return success();
}
