//===- ModelStats.cpp - size and cost of a model, read from its IR --------===//

#include "parc/Models/ModelStats.h"

#include "parc/IR/ParcDialect.h"
#include "parc/IR/ParcInterfaces.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::parc;

ModelStats mlir::parc::computeModelStats(func::FuncOp func) {
  ModelStats stats;
  for (BlockArgument argument : func.getArguments()) {
    auto role = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                  ParcDialect::kRoleAttrName);
    auto type = dyn_cast<ShapedType>(argument.getType());
    if (!role || role.getValue() != "param" || !type || !type.hasStaticShape())
      continue;
    stats.parameters += type.getNumElements();
    stats.parameterBytes +=
        type.getNumElements() * type.getElementTypeBitWidth() / 8;
  }
  func.walk([&](Operation *op) {
    if (op == func.getOperation())
      return;
    ++stats.opCounts[op->getName().getStringRef().str()];
    if (auto counted = dyn_cast<FlopCountOpInterface>(op))
      stats.forwardFlops += counted.getFlopCount();
  });
  return stats;
}

/// 1234567 -> "1.23 M", 12 -> "12 "; `unit` is appended ("B" for bytes).
static std::string humanCount(int64_t count, StringRef unit = "") {
  const char *prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  double value = count;
  int prefix = 0;
  while (value >= 1000 && prefix < 6) {
    value /= 1000;
    ++prefix;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (prefix == 0)
    os << count;
  else
    os << llvm::format("%.2f", value);
  os << " " << prefixes[prefix] << unit;
  return llvm::StringRef(text).rtrim().str();
}

void mlir::parc::printModelStats(const ModelStats &stats,
                                 llvm::raw_ostream &os) {
  os << "parameters: " << stats.parameters << " ("
     << humanCount(stats.parameters) << ", "
     << humanCount(stats.parameterBytes, "B") << ")\n";
  os << "forward FLOPs per step: " << stats.forwardFlops << " ("
     << humanCount(stats.forwardFlops) << ")\n";
  os << "training FLOPs per step (3x forward): " << stats.getTrainingFlops()
     << " (" << humanCount(stats.getTrainingFlops()) << ")\n";
  os << "ops:\n";
  for (const auto &[name, count] : stats.opCounts)
    os << "  " << name << ": " << count << "\n";
}
