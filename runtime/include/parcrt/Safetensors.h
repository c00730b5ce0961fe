//===- Safetensors.h - Reading and writing safetensors files ----*- C++ -*-===//
//
// Tensors enter and leave parc through safetensors files: an 8-byte
// little-endian header length, a JSON header mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional
// "__metadata__" object of strings), then the raw little-endian data.
// Files are user input: every malformed case is reported as an error that
// names the file and the tensor, never as a crash.
//
//===----------------------------------------------------------------------===//

#ifndef PARCRT_SAFETENSORS_H
#define PARCRT_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parcrt {

enum class DType { F64, F32, F16, BF16, I64, I32, I8, U8, Bool };

/// Parses a safetensors dtype name ("F32", "BF16", "BOOL", ...).
std::optional<DType> parseDType(std::string_view name);
std::string_view dtypeName(DType dtype);
size_t dtypeSize(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  /// Byte offsets [begin, end) within the data section.
  uint64_t begin, end;

  /// The product of `shape` (1 for a scalar).
  int64_t numElements() const;
};

class SafetensorsReader {
public:
  /// Reads the whole file; validates the header and every entry. Returns
  /// nullptr and sets `error` (if non-null) on failure.
  static std::unique_ptr<SafetensorsReader> open(const std::string &path,
                                                 std::string *error);

  /// The tensors in file order of data offsets.
  const std::vector<TensorInfo> &tensors() const { return tensorList; }
  /// nullptr if absent.
  const TensorInfo *find(std::string_view name) const;
  /// The tensor's bytes; not necessarily aligned for its dtype.
  const uint8_t *data(const TensorInfo &info) const;
  /// Converts any dtype to double (f16/bf16 exactly widened, bool to 0/1).
  /// `info` must come from this reader; `out` holds numElements() values.
  void readAsDouble(const TensorInfo &info, double *out) const;
  /// The "__metadata__" string map.
  const std::map<std::string, std::string> &metadata() const {
    return metadataMap;
  }

private:
  SafetensorsReader() = default;

  std::vector<uint8_t> bytes;
  size_t dataStart = 0;
  std::vector<TensorInfo> tensorList;
  std::map<std::string, size_t, std::less<>> byName;
  std::map<std::string, std::string> metadataMap;
};

class SafetensorsWriter {
public:
  /// Stores values converted from double to `dtype`: floats round to nearest
  /// even; integers truncate toward zero after clamping to the dtype's range
  /// (NaN becomes 0); bool is value != 0. `values` holds product(shape)
  /// elements.
  void add(std::string name, DType dtype, std::vector<int64_t> shape,
           const double *values);
  /// Stores product(shape) elements of bytes already in `dtype`.
  void addRaw(std::string name, DType dtype, std::vector<int64_t> shape,
              const void *bytes);
  void setMetadata(std::string key, std::string value);
  /// Writes the 8-byte little-endian header length, the JSON header (padded
  /// with spaces to a multiple of 8) and the data, in the order added.
  /// Fails on duplicate names, negative dimensions and I/O errors. Atomic:
  /// writes PATH.tmp.<pid>, syncs it to disk and renames it over `path`; on
  /// failure removes it and leaves an existing `path` as it was.
  bool write(const std::string &path, std::string *error) const;
  /// Whether write() could create its temporary file for `path` (created
  /// and removed now) and `path` is no directory: lets a long run fail
  /// before its work rather than after it.
  static bool checkWritable(const std::string &path, std::string *error);

private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes;
    /// Set when the shape has a negative or overflowing dimension.
    bool badShape;
  };
  Entry &addEntry(std::string name, DType dtype, std::vector<int64_t> shape);

  std::vector<Entry> entries;
  std::map<std::string, std::string> metadataMap;
};

/// IEEE binary16 and bfloat16 conversions; narrowing rounds to nearest even
/// (NaN stays NaN, overflow becomes infinity).
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);

// Inline: mixed precision converts every 16-bit operand and result of every
// op through these, in loops the compiler vectorizes.
inline float bfloat16ToFloat(uint16_t bits) {
  uint32_t floatBits = static_cast<uint32_t>(bits) << 16;
  float result;
  std::memcpy(&result, &floatBits, sizeof(result));
  return result;
}

/// The upper half of the float, rounded to nearest even on the lower half
/// (a carry into the exponent gives the next binade, or infinity); NaNs stay
/// quiet NaNs.
inline uint16_t floatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7FFFu + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace parcrt

#endif // PARCRT_SAFETENSORS_H
