//===- DistDialect.cpp - distribution dialect -----------------------------===//

#include "dist/IR/DistDialect.h"
#include "dist/IR/DistOps.h"

using namespace mlir;
using namespace mlir::dist;

#include "dist/IR/DistDialect.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dist/IR/DistOps.cpp.inc"
      >();
  registerAttributes();
}
