//===- DistAttrs.cpp - distribution dialect attributes --------------------===//

#include "dist/IR/DistAttrs.h"
#include "dist/IR/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dist;

#include "dist/IR/DistEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dist/IR/DistAttrs.cpp.inc"
      >();
}

/// Parses `[a, b]` into an array of string attributes.
static ParseResult parseAxisList(AsmParser &parser, ArrayAttr &axes) {
  SmallVector<Attribute> names;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        std::string name;
        if (parser.parseKeywordOrString(&name))
          return failure();
        names.push_back(parser.getBuilder().getStringAttr(name));
        return success();
      }))
    return failure();
  axes = parser.getBuilder().getArrayAttr(names);
  return success();
}

static void printAxisList(AsmPrinter &printer, ArrayAttr axes) {
  printer << "[";
  llvm::interleaveComma(axes, printer, [&](Attribute axis) {
    printer.printKeywordOrString(cast<StringAttr>(axis).getValue());
  });
  printer << "]";
}

// #dist.sharding<@m, [[dp], [], [tp]], partial [tp]>
Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  FlatSymbolRefAttr mesh;
  SmallVector<Attribute> dims;
  if (parser.parseLess() || parser.parseAttribute(mesh) ||
      parser.parseComma() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        ArrayAttr axes;
        if (parseAxisList(parser, axes))
          return failure();
        dims.push_back(axes);
        return success();
      }))
    return {};
  ArrayAttr partial = parser.getBuilder().getArrayAttr({});
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("partial") || parseAxisList(parser, partial)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), mesh,
                    parser.getBuilder().getArrayAttr(dims), partial);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<" << getMesh() << ", [";
  llvm::interleaveComma(getDims(), printer, [&](Attribute axes) {
    printAxisList(printer, cast<ArrayAttr>(axes));
  });
  printer << "]";
  if (!getPartial().empty()) {
    printer << ", partial ";
    printAxisList(printer, getPartial());
  }
  printer << ">";
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh, ArrayAttr dims,
                                   ArrayAttr partial) {
  llvm::StringSet<> seen;
  auto checkAxes = [&](ArrayAttr axes, StringRef where) -> LogicalResult {
    for (Attribute axis : axes) {
      auto name = dyn_cast<StringAttr>(axis);
      if (!name)
        return emitError() << "mesh axes must be names";
      if (!seen.insert(name.getValue()).second)
        return emitError() << "mesh axis '" << name.getValue()
                           << "' is used twice in one sharding (again in "
                           << where << ")";
    }
    return success();
  };
  for (auto [dim, axes] : llvm::enumerate(dims)) {
    auto list = dyn_cast<ArrayAttr>(axes);
    if (!list || failed(checkAxes(list, "dimension " + std::to_string(dim))))
      return failure();
  }
  return checkAxes(partial, "partial");
}

SmallVector<StringAttr> ShardingAttr::getDimAxes(unsigned dim) const {
  return llvm::to_vector(
      llvm::map_range(cast<ArrayAttr>(getDims()[dim]),
                      [](Attribute axis) { return cast<StringAttr>(axis); }));
}

SmallVector<StringAttr> ShardingAttr::getPartialAxes() const {
  return llvm::to_vector(llvm::map_range(
      getPartial(), [](Attribute axis) { return cast<StringAttr>(axis); }));
}

bool ShardingAttr::isReplicated() const {
  return getPartial().empty() &&
         llvm::all_of(getDims(), [](Attribute axes) {
           return cast<ArrayAttr>(axes).empty();
         });
}
