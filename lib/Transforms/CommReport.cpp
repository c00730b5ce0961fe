//===- CommReport.cpp - the collectives of a program and their bytes ------===//

#include "parc/Transforms/Passes.h"

#include "dist/IR/DistOps.h"
#include "llvm/Support/Format.h"

#include <map>

namespace mlir::parc {
#define GEN_PASS_DEF_COMMREPORTPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {

struct Totals {
  int64_t count = 0;
  int64_t bufferBytes = 0;
  double trafficBytes = 0;

  void add(int64_t buffer, double traffic) {
    ++count;
    bufferBytes += buffer;
    trafficBytes += traffic;
  }
};

void printTotals(llvm::raw_ostream &os, StringRef label, const Totals &t) {
  os << "  " << label << ": " << t.count << " collectives, "
     << t.bufferBytes << " bytes, traffic "
     << llvm::format("%.0f", t.trafficBytes) << " bytes per rank\n";
}

struct CommReportPass
    : public parc::impl::CommReportPassBase<CommReportPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      Totals all;
      std::map<std::string, Totals> byKind;
      bool header = false;
      func.walk([&](dist::CommunicationOpInterface op) {
        if (!header) {
          os << "function @" << func.getSymName() << "\n";
          header = true;
        }
        auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
        dist::MeshOp mesh = meshName ? dist::lookupMesh(op, meshName)
                                     : dist::MeshOp();
        SmallVector<StringAttr> axes = llvm::to_vector(
            op.getGroupAxes().getAsRange<StringAttr>());
        int64_t groupSize = mesh ? mesh.getGroupSize(axes) : 1;
        int64_t buffer = op.getBufferBytes();
        double traffic = op.getTrafficBytes(groupSize);
        std::string kind = op->getName().stripDialect().str();
        auto type = dyn_cast<ShapedType>(op->getOperand(0).getType());
        os << "  " << kind << " [";
        llvm::interleaveComma(axes, os,
                              [&](StringAttr axis) { os << axis.getValue(); });
        os << "] x" << groupSize << ": "
           << (type ? type.getNumElements() : 0) << " elements in, "
           << buffer << " bytes, traffic " << llvm::format("%.0f", traffic)
           << " bytes per rank  " << op->getLoc() << "\n";
        all.add(buffer, traffic);
        byKind[kind].add(buffer, traffic);
      });
      if (!header)
        continue;
      for (const auto &[kind, totals] : byKind)
        printTotals(os, kind, totals);
      printTotals(os, "total", all);
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
