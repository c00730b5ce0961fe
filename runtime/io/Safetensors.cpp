//===- Safetensors.cpp - Reading and writing safetensors files ------------===//

#include "parcrt/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace parcrt;

// Tensor data is stored little-endian and copied byte for byte.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "parcrt's safetensors support assumes a little-endian host"
#endif

namespace {

using json = nlohmann::json;

bool setError(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

/// The product of `shape`, or nullopt if a dimension is negative or the
/// product exceeds int64.
std::optional<int64_t> checkedNumElements(const std::vector<int64_t> &shape) {
  int64_t product = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(product, dim, &product))
      return std::nullopt;
  return product;
}

/// Rounds `value` to nearest even in a 16-bit IEEE-like format with
/// `expBits` exponent and `mantBits` mantissa bits. Rounding directly from
/// double avoids the double rounding of a double -> float -> 16-bit path.
uint16_t narrowTo16(double value, int expBits, int mantBits) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint32_t sign = static_cast<uint32_t>(bits >> 63) << 15;
  int exp = static_cast<int>((bits >> 52) & 0x7FF);
  uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
  uint32_t infBits = ((uint32_t(1) << expBits) - 1) << mantBits;
  if (exp == 0x7FF) {
    if (mant == 0)
      return static_cast<uint16_t>(sign | infBits);
    // Quiet NaN, keeping the top of the payload.
    uint32_t quiet = uint32_t(1) << (mantBits - 1);
    return static_cast<uint16_t>(
        sign | infBits | quiet |
        static_cast<uint32_t>(mant >> (52 - mantBits)));
  }
  // Double subnormals are far below the smallest 16-bit subnormal.
  if (exp == 0)
    return static_cast<uint16_t>(sign);
  int bias = (1 << (expBits - 1)) - 1;
  int targetExp = exp - 1023 + bias;
  if (targetExp >= (1 << expBits) - 1)
    return static_cast<uint16_t>(sign | infBits);
  uint64_t significand = mant | (uint64_t(1) << 52);
  // Target subnormals (targetExp <= 0) keep fewer mantissa bits.
  int shift = 52 - mantBits + (targetExp < 1 ? 1 - targetExp : 0);
  if (shift > 60)
    return static_cast<uint16_t>(sign);
  uint64_t kept = significand >> shift;
  uint64_t rest = significand & ((uint64_t(1) << shift) - 1);
  uint64_t halfway = uint64_t(1) << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1)))
    ++kept;
  // A rounding carry moves into the exponent field, up to infinity.
  uint64_t magnitude =
      targetExp < 1 ? kept
                    : (static_cast<uint64_t>(targetExp - 1) << mantBits) + kept;
  magnitude = std::min<uint64_t>(magnitude, infBits);
  return static_cast<uint16_t>(sign | magnitude);
}

uint16_t doubleToHalf(double value) { return narrowTo16(value, 5, 10); }
uint16_t doubleToBfloat16(double value) { return narrowTo16(value, 8, 7); }

/// Truncates toward zero after clamping to T's range; NaN becomes 0.
template <typename T> T doubleToInt(double value) {
  if (std::isnan(value))
    return 0;
  if (value <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  // max() may round up to a power of two as a double, hence >=.
  if (value >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(value);
}

template <typename T>
void storeAll(const double *values, size_t count, uint8_t *out,
              T (*convert)(double)) {
  for (size_t i = 0; i < count; ++i) {
    T stored = convert(values[i]);
    std::memcpy(out + i * sizeof(T), &stored, sizeof(T));
  }
}

template <typename T>
void loadAll(const uint8_t *in, size_t count, double *out,
             double (*convert)(T)) {
  for (size_t i = 0; i < count; ++i) {
    T stored;
    std::memcpy(&stored, in + i * sizeof(T), sizeof(T));
    out[i] = convert(stored);
  }
}

/// Reads a whole file, including non-seekable ones.
bool readFile(const std::string &path, std::vector<uint8_t> &bytes,
              std::string *error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return setError(error, path + ": cannot open: " + std::strerror(errno));
  struct stat status;
  if (::fstat(fileno(file), &status) == 0 && S_ISREG(status.st_mode))
    bytes.reserve(static_cast<size_t>(status.st_size));
  uint8_t chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + got);
  bool failed = std::ferror(file);
  int readErrno = errno;
  std::fclose(file);
  if (failed)
    return setError(error, path + ": cannot read: " + std::strerror(readErrno));
  return true;
}

std::string dumpJson(const json &value) {
  // The replace handler makes dump() unable to throw on invalid UTF-8.
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Reads a JSON non-negative integer that fits `limit`.
std::optional<uint64_t> readUnsigned(const json &value, uint64_t limit) {
  if (!value.is_number_unsigned())
    return std::nullopt;
  uint64_t number = value.get<uint64_t>();
  if (number > limit)
    return std::nullopt;
  return number;
}

/// write() writes here and renames it over `path`: in the same directory,
/// so the rename is atomic, and per process, so concurrent writers do not
/// share one.
std::string temporaryPath(const std::string &path) {
  return path + ".tmp." + std::to_string(::getpid());
}

/// The message names `path`: the temporary file is write()'s business.
std::FILE *createTemporary(const std::string &path,
                           const std::string &temporary, std::string *error) {
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    setError(error,
             path + ": cannot open for writing: " + std::strerror(errno));
  return file;
}

} // namespace

//===----------------------------------------------------------------------===//
// DType and 16-bit float helpers
//===----------------------------------------------------------------------===//

std::optional<DType> parcrt::parseDType(std::string_view name) {
  for (DType dtype :
       {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
        DType::I8, DType::U8, DType::Bool})
    if (dtypeName(dtype) == name)
      return dtype;
  return std::nullopt;
}

std::string_view parcrt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return "F64";
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I64:
    return "I64";
  case DType::I32:
    return "I32";
  case DType::I8:
    return "I8";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  }
  return "";
}

size_t parcrt::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  return 0;
}

float parcrt::halfToFloat(uint16_t bits) {
  float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  int exp = (bits >> 10) & 0x1F;
  uint32_t mant = bits & 0x3FF;
  if (exp == 0)
    return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 0x1F) {
    uint32_t floatBits = (static_cast<uint32_t>(bits & 0x8000) << 16) |
                         0x7F800000u | (mant << 13);
    float result;
    std::memcpy(&result, &floatBits, sizeof(result));
    return result;
  }
  return sign * std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
}

uint16_t parcrt::floatToHalf(float value) { return doubleToHalf(value); }

int64_t TensorInfo::numElements() const {
  return checkedNumElements(shape).value_or(0);
}

//===----------------------------------------------------------------------===//
// SafetensorsReader
//===----------------------------------------------------------------------===//

std::unique_ptr<SafetensorsReader>
SafetensorsReader::open(const std::string &path, std::string *error) {
  std::unique_ptr<SafetensorsReader> reader(new SafetensorsReader());
  std::vector<uint8_t> &bytes = reader->bytes;
  if (!readFile(path, bytes, error))
    return nullptr;
  auto fail = [&](const std::string &message) {
    setError(error, path + ": " + message);
    return nullptr;
  };

  if (bytes.size() < 8)
    return fail("file is " + std::to_string(bytes.size()) +
                " bytes, too short for the 8-byte header length");
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i)
    headerLength = (headerLength << 8) | bytes[i];
  if (headerLength > bytes.size() - 8)
    return fail("header length " + std::to_string(headerLength) +
                " exceeds the " + std::to_string(bytes.size() - 8) +
                " bytes after the 8-byte length field");
  reader->dataStart = 8 + static_cast<size_t>(headerLength);
  uint64_t dataSize = bytes.size() - reader->dataStart;

  // nlohmann keeps the last of duplicate keys, so duplicates are caught
  // while parsing. Nesting deeper than the schema is dropped unparsed into
  // the DOM, which bounds the work a hostile header can cause.
  std::vector<std::set<std::string>> keysPerObject;
  std::optional<std::string> currentTensor;
  std::string parseProblem;
  auto tensorPrefix = [&] {
    return currentTensor ? "tensor '" + *currentTensor + "': " : std::string();
  };
  auto callback = [&](int depth, json::parse_event_t event, json &parsed) {
    if (!parseProblem.empty())
      return false;
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start:
      if (depth >= 3) {
        parseProblem =
            tensorPrefix() + "header nests deeper than the safetensors schema";
        return false;
      }
      if (event == json::parse_event_t::object_start)
        keysPerObject.emplace_back();
      return true;
    case json::parse_event_t::object_end:
      if (!keysPerObject.empty())
        keysPerObject.pop_back();
      return true;
    case json::parse_event_t::key: {
      const std::string *key = parsed.get_ptr<const std::string *>();
      if (!key || keysPerObject.empty())
        return true;
      if (depth == 1)
        currentTensor = *key;
      if (!keysPerObject.back().insert(*key).second)
        parseProblem = depth == 1
                           ? "duplicate tensor name '" + *key + "'"
                           : tensorPrefix() + "duplicate key '" + *key + "'";
      return true;
    }
    default:
      return true;
    }
  };
  const char *headerBegin = reinterpret_cast<const char *>(bytes.data()) + 8;
  json header = json::parse(headerBegin, headerBegin + headerLength, callback,
                            /*allow_exceptions=*/false);
  if (!parseProblem.empty())
    return fail(parseProblem);
  if (header.is_discarded())
    return fail("header is not valid JSON");
  if (!header.is_object())
    return fail("header is not a JSON object");

  for (const auto &item : header.items()) {
    const std::string &name = item.key();
    const json &entry = item.value();
    std::string where = "tensor '" + name + "': ";
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("__metadata__ is not a JSON object");
      for (const auto &field : entry.items()) {
        const std::string *value = field.value().get_ptr<const std::string *>();
        if (!value)
          return fail("__metadata__ entry '" + field.key() +
                      "' is not a string");
        reader->metadataMap[field.key()] = *value;
      }
      continue;
    }
    if (!entry.is_object())
      return fail(where + "entry is not a JSON object");

    TensorInfo info;
    info.name = name;
    auto dtypeIt = entry.find("dtype");
    const std::string *dtypeText =
        dtypeIt == entry.end() ? nullptr
                               : dtypeIt->get_ptr<const std::string *>();
    if (!dtypeText)
      return fail(where + "missing or non-string dtype");
    std::optional<DType> dtype = parseDType(*dtypeText);
    if (!dtype)
      return fail(where + "unsupported dtype '" + *dtypeText + "'");
    info.dtype = *dtype;

    auto shapeIt = entry.find("shape");
    if (shapeIt == entry.end() || !shapeIt->is_array())
      return fail(where + "missing or non-array shape");
    for (const json &dim : *shapeIt) {
      std::optional<uint64_t> size =
          readUnsigned(dim, std::numeric_limits<int64_t>::max());
      if (!size) {
        if (dim.is_number_integer() && !dim.is_number_unsigned())
          return fail(where + "shape entry " + dumpJson(dim) + " is negative");
        return fail(where + "shape entry " + dumpJson(dim) +
                    " is not a non-negative 64-bit integer");
      }
      info.shape.push_back(static_cast<int64_t>(*size));
    }

    auto offsetsIt = entry.find("data_offsets");
    std::optional<uint64_t> begin, end;
    if (offsetsIt != entry.end() && offsetsIt->is_array() &&
        offsetsIt->size() == 2) {
      begin = readUnsigned((*offsetsIt)[0], UINT64_MAX);
      end = readUnsigned((*offsetsIt)[1], UINT64_MAX);
    }
    if (!begin || !end)
      return fail(where +
                  "data_offsets must be an array of two non-negative integers");
    info.begin = *begin;
    info.end = *end;
    std::string range = "data_offsets [" + std::to_string(info.begin) + ", " +
                        std::to_string(info.end) + ")";
    if (info.begin > info.end)
      return fail(where + range + " end before they begin");
    if (info.end > dataSize)
      return fail(where + range + " exceed the " + std::to_string(dataSize) +
                  "-byte data section (is the file truncated?)");

    std::string shapeText =
        formatShape(info.shape) + " of " + std::string(dtypeName(info.dtype));
    std::optional<int64_t> count = checkedNumElements(info.shape);
    uint64_t needed;
    if (!count || __builtin_mul_overflow(static_cast<uint64_t>(*count),
                                         dtypeSize(info.dtype), &needed))
      return fail(where + "shape " + shapeText + " has too many elements");
    if (info.end - info.begin != needed)
      return fail(where + range + " hold " +
                  std::to_string(info.end - info.begin) + " bytes but shape " +
                  shapeText + " needs " + std::to_string(needed));
    reader->tensorList.push_back(std::move(info));
  }

  std::vector<TensorInfo> &list = reader->tensorList;
  std::sort(list.begin(), list.end(),
            [](const TensorInfo &a, const TensorInfo &b) {
              if (a.begin != b.begin)
                return a.begin < b.begin;
              if (a.end != b.end)
                return a.end < b.end;
              return a.name < b.name;
            });
  for (size_t i = 0; i < list.size(); ++i)
    reader->byName.emplace(list[i].name, i);
  return reader;
}

const TensorInfo *SafetensorsReader::find(std::string_view name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &tensorList[it->second];
}

const uint8_t *SafetensorsReader::data(const TensorInfo &info) const {
  return bytes.data() + dataStart + info.begin;
}

void SafetensorsReader::readAsDouble(const TensorInfo &info,
                                     double *out) const {
  const uint8_t *in = data(info);
  size_t count = static_cast<size_t>(info.numElements());
  switch (info.dtype) {
  case DType::F64:
    return loadAll<double>(in, count, out, [](double v) { return v; });
  case DType::F32:
    return loadAll<float>(in, count, out,
                          [](float v) { return static_cast<double>(v); });
  case DType::F16:
    return loadAll<uint16_t>(in, count, out, [](uint16_t v) {
      return static_cast<double>(halfToFloat(v));
    });
  case DType::BF16:
    return loadAll<uint16_t>(in, count, out, [](uint16_t v) {
      return static_cast<double>(bfloat16ToFloat(v));
    });
  case DType::I64:
    return loadAll<int64_t>(in, count, out,
                            [](int64_t v) { return static_cast<double>(v); });
  case DType::I32:
    return loadAll<int32_t>(in, count, out,
                            [](int32_t v) { return static_cast<double>(v); });
  case DType::I8:
    return loadAll<int8_t>(in, count, out,
                           [](int8_t v) { return static_cast<double>(v); });
  case DType::U8:
    return loadAll<uint8_t>(in, count, out,
                            [](uint8_t v) { return static_cast<double>(v); });
  case DType::Bool:
    return loadAll<uint8_t>(in, count, out,
                            [](uint8_t v) { return v != 0 ? 1.0 : 0.0; });
  }
}

//===----------------------------------------------------------------------===//
// SafetensorsWriter
//===----------------------------------------------------------------------===//

SafetensorsWriter::Entry &
SafetensorsWriter::addEntry(std::string name, DType dtype,
                            std::vector<int64_t> shape) {
  std::optional<int64_t> count = checkedNumElements(shape);
  uint64_t byteCount = 0;
  bool badShape =
      !count || __builtin_mul_overflow(static_cast<uint64_t>(*count),
                                       dtypeSize(dtype), &byteCount);
  entries.push_back({std::move(name), dtype, std::move(shape), {}, badShape});
  if (!badShape)
    entries.back().bytes.resize(byteCount);
  return entries.back();
}

void SafetensorsWriter::add(std::string name, DType dtype,
                            std::vector<int64_t> shape, const double *values) {
  Entry &entry = addEntry(std::move(name), dtype, std::move(shape));
  uint8_t *out = entry.bytes.data();
  size_t count = entry.bytes.size() / dtypeSize(dtype);
  switch (dtype) {
  case DType::F64:
    return storeAll<double>(values, count, out, [](double v) { return v; });
  case DType::F32:
    return storeAll<float>(values, count, out,
                           [](double v) { return static_cast<float>(v); });
  case DType::F16:
    return storeAll<uint16_t>(values, count, out, doubleToHalf);
  case DType::BF16:
    return storeAll<uint16_t>(values, count, out, doubleToBfloat16);
  case DType::I64:
    return storeAll<int64_t>(values, count, out, doubleToInt<int64_t>);
  case DType::I32:
    return storeAll<int32_t>(values, count, out, doubleToInt<int32_t>);
  case DType::I8:
    return storeAll<int8_t>(values, count, out, doubleToInt<int8_t>);
  case DType::U8:
    return storeAll<uint8_t>(values, count, out, doubleToInt<uint8_t>);
  case DType::Bool:
    return storeAll<uint8_t>(values, count, out, [](double v) {
      return static_cast<uint8_t>(v != 0 ? 1 : 0);
    });
  }
}

void SafetensorsWriter::addRaw(std::string name, DType dtype,
                               std::vector<int64_t> shape, const void *bytes) {
  Entry &entry = addEntry(std::move(name), dtype, std::move(shape));
  if (!entry.bytes.empty())
    std::memcpy(entry.bytes.data(), bytes, entry.bytes.size());
}

void SafetensorsWriter::setMetadata(std::string key, std::string value) {
  metadataMap[std::move(key)] = std::move(value);
}

bool SafetensorsWriter::write(const std::string &path,
                              std::string *error) const {
  // ordered_json keeps the header in the order tensors were added.
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadataMap.empty())
    header["__metadata__"] = metadataMap;
  std::set<std::string_view> names;
  uint64_t offset = 0;
  for (const Entry &entry : entries) {
    std::string where = path + ": tensor '" + entry.name + "': ";
    if (entry.name == "__metadata__")
      return setError(error, where + "the name is reserved for metadata");
    if (!names.insert(entry.name).second)
      return setError(error, where + "added twice");
    if (entry.badShape)
      return setError(error, where + "shape " + formatShape(entry.shape) +
                                 " has a negative dimension or too many "
                                 "elements");
    header[entry.name] = {
        {"dtype", dtypeName(entry.dtype)},
        {"shape", entry.shape},
        {"data_offsets", {offset, offset + entry.bytes.size()}}};
    offset += entry.bytes.size();
  }
  std::string text = header.dump(
      -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  // Padding keeps the data section 8-byte aligned within the file.
  text.append((8 - text.size() % 8) % 8, ' ');
  uint8_t lengthBytes[8];
  for (int i = 0; i < 8; ++i)
    lengthBytes[i] = static_cast<uint8_t>(uint64_t(text.size()) >> (8 * i));

  std::string temporary = temporaryPath(path);
  std::FILE *file = createTemporary(path, temporary, error);
  if (!file)
    return false;
  bool ok = std::fwrite(lengthBytes, 1, 8, file) == 8 &&
            std::fwrite(text.data(), 1, text.size(), file) == text.size();
  for (const Entry &entry : entries)
    ok = ok && (entry.bytes.empty() ||
                std::fwrite(entry.bytes.data(), 1, entry.bytes.size(), file) ==
                    entry.bytes.size());
  // Flushed to disk before the rename, so that a crash leaves the old file
  // or the whole new one.
  ok = ok && std::fflush(file) == 0 && ::fsync(fileno(file)) == 0;
  int writeErrno = errno;
  if (std::fclose(file) != 0 && ok) {
    ok = false;
    writeErrno = errno;
  }
  if (ok && std::rename(temporary.c_str(), path.c_str()) != 0) {
    ok = false;
    writeErrno = errno;
  }
  if (!ok) {
    std::remove(temporary.c_str());
    return setError(error,
                    path + ": cannot write: " + std::strerror(writeErrno));
  }
  return true;
}

bool SafetensorsWriter::checkWritable(const std::string &path,
                                      std::string *error) {
  struct stat status;
  if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode))
    return setError(error, path + ": is a directory");
  std::string temporary = temporaryPath(path);
  std::FILE *file = createTemporary(path, temporary, error);
  if (!file)
    return false;
  std::fclose(file);
  std::remove(temporary.c_str());
  return true;
}
