//===- CommunicationSummary.h - the collectives of a program ----*- C++ -*-===//

#ifndef PARC_TRANSFORMS_COMMUNICATIONSUMMARY_H
#define PARC_TRANSFORMS_COMMUNICATIONSUMMARY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace mlir::parc {

struct CollectiveRecord {
  std::string kind;
  SmallVector<std::string> axes;
  int64_t groupSize;
  int64_t elements;
  int64_t bufferBytes;
  double trafficBytes;
  Location loc;
};

struct CommunicationTotals {
  int64_t count = 0;
  int64_t bufferBytes = 0;
  double trafficBytes = 0;

  void add(const CollectiveRecord &record);
};

/// Every collective of `func` in program order, with the bytes it moves
/// (CommunicationOpInterface).
SmallVector<CollectiveRecord> collectCollectives(func::FuncOp func);

/// Totals per kind (sorted by name).
std::map<std::string, CommunicationTotals>
totalsByKind(ArrayRef<CollectiveRecord> records);

void printTotals(llvm::raw_ostream &os, StringRef label,
                 const CommunicationTotals &totals);

} // namespace mlir::parc

#endif // PARC_TRANSFORMS_COMMUNICATIONSUMMARY_H
