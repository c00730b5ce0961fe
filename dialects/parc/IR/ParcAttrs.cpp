//===- ParcAttrs.cpp - parc dialect attributes ----------------------------===//

#include "parc/IR/ParcAttrs.h"
#include "parc/IR/ParcDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::parc;

#include "parc/IR/ParcEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "parc/IR/ParcAttrs.cpp.inc"

void ParcDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "parc/IR/ParcAttrs.cpp.inc"
      >();
}

/// Parses a float or an integer literal, so `uniform(0, 50257)` reads as
/// written.
static ParseResult parseNumber(AsmParser &parser, double &value) {
  bool negative = succeeded(parser.parseOptionalMinus());
  APInt integer;
  OptionalParseResult parsedInteger = parser.parseOptionalInteger(integer);
  if (parsedInteger.has_value()) {
    if (failed(*parsedInteger))
      return failure();
    value = static_cast<double>(integer.getLimitedValue());
  } else if (parser.parseFloat(value)) {
    return failure();
  }
  if (negative)
    value = -value;
  return success();
}

// #parc.init<normal(0.0, 0.02)>, #parc.init<constant(1.0)>
Attribute InitAttr::parse(AsmParser &parser, Type) {
  StringRef keyword;
  SMLoc keywordLoc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&keyword))
    return {};
  std::optional<InitDistribution> distribution =
      symbolizeInitDistribution(keyword);
  if (!distribution) {
    parser.emitError(keywordLoc, "unknown init distribution '")
        << keyword << "'; expected normal, uniform or constant";
    return {};
  }
  double first = 0, second = 0;
  if (parser.parseLParen() || parseNumber(parser, first))
    return {};
  if (*distribution != InitDistribution::Constant &&
      (parser.parseComma() || parseNumber(parser, second)))
    return {};
  if (parser.parseRParen() || parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(keywordLoc); },
                    parser.getContext(), *distribution, APFloat(first),
                    APFloat(second));
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyInitDistribution(getDistribution()) << "("
          << getFirst().convertToDouble();
  if (getDistribution() != InitDistribution::Constant)
    printer << ", " << getSecond().convertToDouble();
  printer << ")>";
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitDistribution distribution,
                               APFloat firstValue, APFloat secondValue) {
  double first = firstValue.convertToDouble();
  double second = secondValue.convertToDouble();
  if (distribution == InitDistribution::Normal && !(second >= 0))
    return emitError() << "normal init needs a non-negative std, got "
                       << second;
  if (distribution == InitDistribution::Uniform && !(first < second))
    return emitError() << "uniform init needs low < high, got [" << first
                       << ", " << second << ")";
  return success();
}
