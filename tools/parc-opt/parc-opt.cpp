//===- parc-opt.cpp - runs parc passes, as mlir-opt does ------------------===//

#include "dist/IR/DistDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "parc/Conversion/Passes.h"
#include "parc/Conversion/RuntimeCallOpInterface.h"
#include "parc/IR/ParcDialect.h"
#include "parc/Transforms/LocalPartitionOpInterface.h"
#include "parc/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::parc::registerParcPasses();
  mlir::parc::registerParcConversionPasses();
  mlir::DialectRegistry registry;
  registry.insert<mlir::parc::ParcDialect, mlir::dist::DistDialect,
                  mlir::func::FuncDialect>();
  mlir::parc::registerLocalPartitionModels(registry);
  mlir::parc::registerRuntimeCallModels(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "parc optimizer driver\n", registry));
}
