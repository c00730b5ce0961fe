//===- ParcDialect.cpp - parc graph dialect -------------------------------===//

#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcAttrs.h"
#include "parc/IR/ParcOps.h"

using namespace mlir;
using namespace mlir::parc;

#include "parc/IR/ParcDialect.cpp.inc"

void ParcDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "parc/IR/ParcOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *ParcDialect::materializeConstant(OpBuilder &builder,
                                            Attribute value, Type type,
                                            Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
