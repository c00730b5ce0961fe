//===- Values.cpp - tensor elements between double and dtypes -------------===//

#include "parcrt/Values.h"

using namespace parcrt;

void parcrt::encodeValues(const std::vector<double> &values, parcrt_dtype dtype,
                          void *out) {
  for (size_t i = 0; i < values.size(); ++i) {
    double value = values[i];
    switch (dtype) {
    case PARCRT_F32:
      static_cast<float *>(out)[i] = static_cast<float>(value);
      break;
    case PARCRT_F16:
      static_cast<uint16_t *>(out)[i] = floatToHalf(static_cast<float>(value));
      break;
    case PARCRT_BF16:
      static_cast<uint16_t *>(out)[i] =
          floatToBfloat16(static_cast<float>(value));
      break;
    case PARCRT_I32:
      static_cast<int32_t *>(out)[i] = static_cast<int32_t>(value);
      break;
    case PARCRT_I64:
      static_cast<int64_t *>(out)[i] = static_cast<int64_t>(value);
      break;
    }
  }
}

std::vector<double> parcrt::decodeValues(const void *data, parcrt_dtype dtype,
                                         int64_t count) {
  std::vector<double> values(count);
  for (int64_t i = 0; i < count; ++i) {
    switch (dtype) {
    case PARCRT_F32:
      values[i] = static_cast<const float *>(data)[i];
      break;
    case PARCRT_F16:
      values[i] = halfToFloat(static_cast<const uint16_t *>(data)[i]);
      break;
    case PARCRT_BF16:
      values[i] = bfloat16ToFloat(static_cast<const uint16_t *>(data)[i]);
      break;
    case PARCRT_I32:
      values[i] = static_cast<const int32_t *>(data)[i];
      break;
    case PARCRT_I64:
      values[i] = static_cast<double>(static_cast<const int64_t *>(data)[i]);
      break;
    }
  }
  return values;
}

DType parcrt::fileDType(parcrt_dtype dtype) {
  switch (dtype) {
  case PARCRT_F32:
    return DType::F32;
  case PARCRT_F16:
    return DType::F16;
  case PARCRT_BF16:
    return DType::BF16;
  case PARCRT_I32:
    return DType::I32;
  case PARCRT_I64:
    return DType::I64;
  }
  return DType::F32;
}
