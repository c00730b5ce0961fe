//===- CommunicationSummary.cpp - the collectives of a program ------------===//

#include "parc/Transforms/CommunicationSummary.h"

#include "dist/IR/DistOps.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::parc;

void CommunicationTotals::add(const CollectiveRecord &record) {
  ++count;
  bufferBytes += record.bufferBytes;
  trafficBytes += record.trafficBytes;
}

SmallVector<CollectiveRecord> mlir::parc::collectCollectives(func::FuncOp func) {
  SmallVector<CollectiveRecord> records;
  func.walk([&](dist::CommunicationOpInterface op) {
    auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
    dist::MeshOp mesh =
        meshName ? dist::lookupMesh(op, meshName) : dist::MeshOp();
    SmallVector<StringAttr> axes =
        llvm::to_vector(op.getGroupAxes().getAsRange<StringAttr>());
    int64_t groupSize = mesh ? mesh.getGroupSize(axes) : 1;
    // axis_index has no operand: count its result.
    Value data = op->getNumOperands() ? op->getOperand(0) : op->getResult(0);
    auto type = dyn_cast<ShapedType>(data.getType());
    CollectiveRecord record{op->getName().stripDialect().str(),
                            {},
                            groupSize,
                            type ? type.getNumElements() : 0,
                            op.getBufferBytes(),
                            op.getTrafficBytes(groupSize),
                            op->getLoc()};
    for (StringAttr axis : axes)
      record.axes.push_back(axis.getValue().str());
    records.push_back(std::move(record));
  });
  return records;
}

std::map<std::string, CommunicationTotals>
mlir::parc::totalsByKind(ArrayRef<CollectiveRecord> records) {
  std::map<std::string, CommunicationTotals> totals;
  for (const CollectiveRecord &record : records)
    totals[record.kind].add(record);
  return totals;
}

void mlir::parc::printTotals(llvm::raw_ostream &os, StringRef label,
                             const CommunicationTotals &totals) {
  os << "  " << label << ": " << totals.count << " collectives, "
     << totals.bufferBytes << " bytes, traffic "
     << llvm::format("%.0f", totals.trafficBytes) << " bytes per rank\n";
}
