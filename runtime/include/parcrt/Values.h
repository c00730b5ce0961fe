//===- Values.h - tensor elements between double and dtypes -----*- C++ -*-===//
//
// The launcher computes initial values and assembles results in double, as
// the reference evaluator does, and converts at the arena's boundary; the
// cpu backend's cast converts through the same functions.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_VALUES_H
#define PARCRT_VALUES_H

#include "parcrt/Safetensors.h"
#include "parcrt/parcrt.h"

#include <cstdint>
#include <vector>

namespace parcrt {

/// Stores `values` as `dtype` at `out`: floats round to nearest even,
/// integers truncate toward zero.
void encodeValues(const std::vector<double> &values, parcrt_dtype dtype,
                  void *out);

/// Widens `count` elements of `dtype` at `data` to double.
std::vector<double> decodeValues(const void *data, parcrt_dtype dtype,
                                 int64_t count);

/// The safetensors dtype that stores `dtype`.
DType fileDType(parcrt_dtype dtype);

} // namespace parcrt

#endif // PARCRT_VALUES_H
