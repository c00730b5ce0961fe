//===- KnownTensor.h - an ONNX tensor whose values are known ----*- C++ -*-===//
//
// Initializers, Constant nodes and what constant folding computes from them.
// Integer elements (INT32, INT64, BOOL as 0/1) are kept as int64 exactly:
// shapes and indices such as INT64_MAX (torch's `x[k:]`) must not pass
// through double.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_IMPORT_KNOWNTENSOR_H
#define PARC_LIB_IMPORT_KNOWNTENSOR_H

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <vector>

namespace mlir::parc {

struct KnownTensor {
  RankedTensorType type;
  /// The elements of a float tensor; empty for an integer one.
  std::vector<double> values;
  /// The elements of an integer tensor; empty for a float one.
  std::vector<int64_t> integers;

  bool isInteger() const { return type.getElementType().isInteger(); }
  int64_t size() const {
    return isInteger() ? static_cast<int64_t>(integers.size())
                       : static_cast<int64_t>(values.size());
  }
  /// Element `i` as a double (integers converted).
  double at(int64_t i) const {
    return isInteger() ? static_cast<double>(integers[i]) : values[i];
  }
};

} // namespace mlir::parc

#endif // PARC_LIB_IMPORT_KNOWNTENSOR_H
