//===- CommReport.cpp - prints the collectives of a program ---------------===//

#include "parc/Transforms/CommunicationSummary.h"
#include "parc/Transforms/LocalSgd.h"
#include "parc/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

namespace mlir::parc {
#define GEN_PASS_DEF_COMMREPORTPASS
#include "parc/Transforms/Passes.h.inc"
} // namespace mlir::parc

using namespace mlir;
using namespace mlir::parc;

namespace {
struct CommReportPass
    : public parc::impl::CommReportPassBase<CommReportPass> {
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      SmallVector<CollectiveRecord> records = collectCollectives(func);
      // Local SGD's averaging, of a partitioned replica's step.
      FailureOr<std::optional<LocalSgdAveraging>> averaging =
          func->hasAttr("dist.partitioned")
              ? getLocalSgdAveraging(func)
              : FailureOr<std::optional<LocalSgdAveraging>>(std::nullopt);
      if (failed(averaging))
        return signalPassFailure();
      if (records.empty() && !*averaging)
        continue;
      os << "function @" << func.getSymName() << "\n";
      CommunicationTotals all;
      for (const CollectiveRecord &record : records) {
        os << "  " << record.kind << " [" << llvm::join(record.axes, ", ")
           << "] x" << record.groupSize << ": " << record.elements
           << " elements in, " << record.bufferBytes << " bytes, traffic "
           << llvm::format("%.0f", record.trafficBytes) << " bytes per rank  "
           << record.loc << "\n";
        all.add(record);
      }
      for (const auto &[kind, totals] : totalsByKind(records))
        printTotals(os, kind, totals);
      printTotals(os, "total", all);
      // Between steps, outside the step's program.
      if (*averaging)
        (*averaging)->print(os);
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
