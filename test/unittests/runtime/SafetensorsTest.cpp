//===- SafetensorsTest.cpp - Safetensors reader and writer tests ----------===//

#include "parcrt/Safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <limits>
#include <sys/stat.h>

using namespace parcrt;

namespace {

std::string tempPath(const std::string &name) {
  const testing::TestInfo *test =
      testing::UnitTest::GetInstance()->current_test_info();
  return testing::TempDir() + "parcrt_" + test->name() + "_" + name;
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  ASSERT_EQ(std::fclose(file), 0);
}

/// A file with the given header text (length prefix added) and data.
std::string fileBytes(const std::string &header, const std::string &data) {
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(static_cast<char>(uint64_t(header.size()) >> (8 * i)));
  return bytes + header + data;
}

/// Opens a file with `bytes` and expects failure with `expected` in the
/// error, which must also name the file.
void expectOpenFails(const std::string &bytes, const std::string &expected) {
  std::string path = tempPath("bad.safetensors");
  writeBytes(path, bytes);
  std::string error;
  EXPECT_EQ(SafetensorsReader::open(path, &error), nullptr);
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
}

/// A new empty directory for one test.
std::string tempDirectory() {
  std::string pattern = tempPath("XXXXXX");
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr) << pattern;
  return pattern;
}

/// The names in `directory`, sorted, without "." and "..".
std::vector<std::string> listDirectory(const std::string &directory) {
  std::vector<std::string> names;
  DIR *dir = ::opendir(directory.c_str());
  EXPECT_NE(dir, nullptr) << directory;
  if (!dir)
    return names;
  while (const dirent *entry = ::readdir(dir))
    if (std::strcmp(entry->d_name, ".") && std::strcmp(entry->d_name, ".."))
      names.push_back(entry->d_name);
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<double> readAll(const SafetensorsReader &reader,
                            const std::string &name) {
  const TensorInfo *info = reader.find(name);
  EXPECT_NE(info, nullptr) << name;
  if (!info)
    return {};
  std::vector<double> out(info->numElements());
  reader.readAsDouble(*info, out.data());
  return out;
}

TEST(SafetensorsTest, DTypeNames) {
  for (DType dtype :
       {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
        DType::I8, DType::U8, DType::Bool})
    EXPECT_EQ(parseDType(dtypeName(dtype)), dtype);
  EXPECT_EQ(dtypeName(DType::Bool), "BOOL");
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I64), 8u);
  EXPECT_FALSE(parseDType("f32"));
  EXPECT_FALSE(parseDType("I16"));
}

TEST(SafetensorsTest, RoundTripEveryDType) {
  struct Case {
    DType dtype;
    std::vector<double> values;
  };
  std::vector<Case> cases = {
      {DType::F64, {0, 1, -2.5, 0.1, 1e300, -1e-300}},
      {DType::F32, {0, 1, -2.5, 0.125, 1024, 0x1.fffffep127}},
      {DType::F16, {0, 1, -2.5, 0.125, 65504, 0x1p-24}},
      {DType::BF16, {0, 1, -2.5, 0.125, 3.140625, 0x1p-133}},
      {DType::I64, {-9007199254740992.0, -1, 0, 7, 1e15, 42}},
      {DType::I32, {-2147483648.0, -1, 0, 7, 2147483647.0, 42}},
      {DType::I8, {-128, -1, 0, 7, 127, 42}},
      {DType::U8, {0, 1, 7, 128, 255, 42}},
      {DType::Bool, {0, 1, 1, 0, 0, 1}},
  };
  SafetensorsWriter writer;
  for (const Case &c : cases)
    writer.add(std::string(dtypeName(c.dtype)), c.dtype, {2, 3},
               c.values.data());
  writer.setMetadata("format", "pt");
  std::string path = tempPath("all.safetensors");
  std::string error;
  ASSERT_TRUE(writer.write(path, &error)) << error;

  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  ASSERT_EQ(reader->tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorInfo &info = reader->tensors()[i];
    EXPECT_EQ(info.name, dtypeName(cases[i].dtype));
    EXPECT_EQ(info.dtype, cases[i].dtype);
    EXPECT_EQ(info.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(info.numElements(), 6);
    EXPECT_EQ(info.end - info.begin, 6 * dtypeSize(info.dtype));
    EXPECT_EQ(readAll(*reader, info.name), cases[i].values) << info.name;
  }
  EXPECT_EQ(reader->metadata().at("format"), "pt");

  // The header is padded so that the data section starts 8-byte aligned.
  std::FILE *file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  uint8_t length[8];
  ASSERT_EQ(std::fread(length, 1, 8, file), 8u);
  std::fclose(file);
  EXPECT_EQ(length[0] % 8, 0);
}

TEST(SafetensorsTest, AddRawScalarAndEmpty) {
  SafetensorsWriter writer;
  const float raw[3] = {1.5f, -2.0f, 0.25f};
  writer.addRaw("raw", DType::F32, {3}, raw);
  double scalar = 4.0;
  writer.add("scalar", DType::F64, {}, &scalar);
  writer.add("empty", DType::F32, {0, 5}, nullptr);
  std::string path = tempPath("raw.safetensors"), error;
  ASSERT_TRUE(writer.write(path, &error)) << error;
  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  const TensorInfo *info = reader->find("raw");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(std::memcmp(reader->data(*info), raw, sizeof(raw)), 0);
  EXPECT_EQ(readAll(*reader, "scalar"), (std::vector<double>{4.0}));
  EXPECT_EQ(reader->find("scalar")->numElements(), 1);
  EXPECT_EQ(reader->find("empty")->numElements(), 0);
  EXPECT_EQ(reader->find("missing"), nullptr);
}

TEST(SafetensorsTest, NarrowingConversions) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // Ties to even: infinity.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(0x1.8p-25f), 0x0001);
  EXPECT_EQ(floatToHalf(0x1.ffcp-15f), 0x0400); // Subnormal carries to normal.
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1e30f), 0x7C00);
  EXPECT_TRUE(std::isnan(
      halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x3555), 0x1.554p-2f);
  EXPECT_EQ(halfToFloat(0xFC00), -std::numeric_limits<float>::infinity());

  EXPECT_EQ(floatToBfloat16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBfloat16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(floatToBfloat16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(floatToBfloat16(3.4e38f), 0x7F80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(
      floatToBfloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
  // Just above a tie rounds up; ties round to even on both signs; the
  // largest float below bf16's overflow threshold stays finite; subnormals
  // round as normals do; a signaling NaN becomes a quiet one.
  EXPECT_EQ(floatToBfloat16(1.0f + 0x1p-8f + 0x1p-23f), 0x3F81);
  EXPECT_EQ(floatToBfloat16(-(1.0f + 0x1p-8f)), 0xBF80);
  EXPECT_EQ(floatToBfloat16(-(1.0f + 3 * 0x1p-8f)), 0xBF82);
  EXPECT_EQ(floatToBfloat16(0x1.fep127f), 0x7F7F);
  EXPECT_EQ(floatToBfloat16(0x1.ffp127f), 0x7F80);
  EXPECT_EQ(floatToBfloat16(0x1.8p-133f), 0x0002);
  EXPECT_EQ(floatToBfloat16(0x1p-134f), 0x0000);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::signaling_NaN()) &
                0x7FC0,
            0x7FC0);

  // Rounding happens once, from double: via float, this value would first
  // round to the tie 1 + 2^-11 and then down to 1.
  SafetensorsWriter writer;
  const double values[] = {1.0 + 0x1p-11 + 0x1p-40, 300, -1e9, NAN, 2.7, -2.7};
  writer.add("h", DType::F16, {1}, values);
  writer.add("i8", DType::I8, {6}, values);
  writer.add("u8", DType::U8, {6}, values);
  writer.add("i64", DType::I64, {3}, values + 1);
  std::string path = tempPath("narrow.safetensors"), error;
  ASSERT_TRUE(writer.write(path, &error)) << error;
  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  EXPECT_EQ(readAll(*reader, "h"), (std::vector<double>{1.0 + 0x1p-10}));
  EXPECT_EQ(readAll(*reader, "i8"),
            (std::vector<double>{1, 127, -128, 0, 2, -2}));
  EXPECT_EQ(readAll(*reader, "u8"), (std::vector<double>{1, 255, 0, 0, 2, 0}));
  EXPECT_EQ(readAll(*reader, "i64"), (std::vector<double>{300, -1e9, 0}));
}

// Made by /usr/bin/python3 with a hand-written writer that mirrors the
// safetensors serializer (struct.pack little-endian data, compact JSON,
// header padded with spaces to a multiple of 8).
TEST(SafetensorsTest, ReadsPythonWrittenFile) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"ids":{"dtype":"I64","shape":[3],)"
      R"("data_offsets":[0,24]},"w":{"dtype":"F32","shape":[2,2],)"
      R"("data_offsets":[24,40]},"h":{"dtype":"F16","shape":[2],)"
      R"("data_offsets":[40,44]},"mask":{"dtype":"BOOL","shape":[2],)"
      R"("data_offsets":[44,46]}}     )";
  const uint8_t lengthAndData[] = {
      // Header length 264, little-endian.
      0x08, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      // ids: -1, 0, 7 as I64.
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      // w: 1, -2, 0.5, 3.25 as F32.
      0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00, 0x3f,
      0x00, 0x00, 0x50, 0x40,
      // h: 1.5, -0.25 as F16; mask: true, false.
      0x00, 0x3e, 0x00, 0xb4, 0x01, 0x00};
  ASSERT_EQ(header.size(), 264u);
  std::string bytes(reinterpret_cast<const char *>(lengthAndData), 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(lengthAndData) + 8,
               sizeof(lengthAndData) - 8);
  std::string path = tempPath("python.safetensors"), error;
  writeBytes(path, bytes);

  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  std::vector<std::string> names;
  for (const TensorInfo &info : reader->tensors())
    names.push_back(info.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ids", "w", "h", "mask"}));
  EXPECT_EQ(reader->find("w")->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(reader->find("h")->dtype, DType::F16);
  EXPECT_EQ(readAll(*reader, "ids"), (std::vector<double>{-1, 0, 7}));
  EXPECT_EQ(readAll(*reader, "w"), (std::vector<double>{1, -2, 0.5, 3.25}));
  EXPECT_EQ(readAll(*reader, "h"), (std::vector<double>{1.5, -0.25}));
  EXPECT_EQ(readAll(*reader, "mask"), (std::vector<double>{1, 0}));
  EXPECT_EQ(reader->metadata(),
            (std::map<std::string, std::string>{{"format", "pt"}}));
}

TEST(SafetensorsTest, TensorsAreInOffsetOrder) {
  std::string path = tempPath("order.safetensors"), error;
  writeBytes(
      path, fileBytes(R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},)"
                      R"("a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})",
                      std::string("\x01\x02\x03\x04", 4)));
  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  ASSERT_EQ(reader->tensors().size(), 2u);
  EXPECT_EQ(reader->tensors()[0].name, "a");
  EXPECT_EQ(reader->tensors()[1].name, "b");
  EXPECT_EQ(readAll(*reader, "b"), (std::vector<double>{3, 4}));
}

TEST(SafetensorsTest, MissingFile) {
  std::string error;
  EXPECT_EQ(SafetensorsReader::open("/nonexistent/x.safetensors", &error),
            nullptr);
  EXPECT_EQ(
      error,
      "/nonexistent/x.safetensors: cannot open: No such file or directory");
  // A null error pointer is allowed.
  EXPECT_EQ(SafetensorsReader::open("/nonexistent/x.safetensors", nullptr),
            nullptr);
}

TEST(SafetensorsTest, DirectoryIsNotAFile) {
  std::string error;
  EXPECT_EQ(SafetensorsReader::open(testing::TempDir(), &error), nullptr);
  EXPECT_NE(error.find("cannot"), std::string::npos) << error;
}

TEST(SafetensorsTest, TooShort) {
  expectOpenFails("\x01\x02\x03\x04\x05",
                  "file is 5 bytes, too short for the 8-byte header length");
  expectOpenFails("", "file is 0 bytes");
}

TEST(SafetensorsTest, HeaderLengthBeyondFile) {
  std::string bytes = fileBytes("{}", "");
  bytes[0] = static_cast<char>(0xE8); // 1000 + 3 * 256.
  bytes[1] = 3;
  expectOpenFails(bytes, "header length 1000 exceeds the 2 bytes after");
  std::string huge(8, '\xFF');
  expectOpenFails(huge + "{}",
                  "header length 18446744073709551615 exceeds the 2 bytes");
}

TEST(SafetensorsTest, MalformedHeaders) {
  const std::string f32x2 = R"("dtype":"F32","shape":[2],"data_offsets":[0,8])";
  const std::string data(16, '\0');
  expectOpenFails(fileBytes("{\"a\":", data), "header is not valid JSON");
  expectOpenFails(fileBytes(std::string("{\"a\xFF\":{}}"), data),
                  "header is not valid JSON");
  expectOpenFails(fileBytes("[1, 2]", data), "header is not a JSON object");
  expectOpenFails(fileBytes(R"({"a":[]})", data),
                  "tensor 'a': entry is not a JSON object");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"Q7","shape":[2],"data_offsets":[0,8]}})",
                data),
      "tensor 'a': unsupported dtype 'Q7'");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":5,"shape":[2],"data_offsets":[0,8]}})", data),
      "tensor 'a': missing or non-string dtype");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", data),
      "tensor 'a': missing or non-array shape");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})",
                data),
      "tensor 'a': shape entry -1 is negative");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,8]}})",
                data),
      "shape entry 1.5 is not a non-negative 64-bit integer");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[9223372036854775808],)"
                R"("data_offsets":[0,8]}})",
                data),
      "shape entry 9223372036854775808 is not a non-negative 64-bit integer");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],)"
                R"("data_offsets":[0,8]}})",
                data),
      "tensor 'a': shape [4611686018427387904, 4] of F32 has too many "
      "elements");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})",
                data),
      "tensor 'a': data_offsets must be an array of two non-negative integers");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,-8]}})",
                data),
      "data_offsets must be an array of two non-negative integers");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",
                data),
      "tensor 'a': data_offsets [8, 0) end before they begin");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                data),
      "tensor 'a': data_offsets [12, 20) exceed the 16-byte data section");
  expectOpenFails(
      fileBytes("{\"a\":{" + f32x2 + "},\"a\":{" + f32x2 + "}}", data),
      "duplicate tensor name 'a'");
  expectOpenFails(fileBytes("{\"a\":{" + f32x2 + ",\"dtype\":\"F64\"}}", data),
                  "tensor 'a': duplicate key 'dtype'");
  expectOpenFails(
      fileBytes(R"({"a":{"dtype":"F32","shape":[[[2]]],"data_offsets":[0,8]}})",
                data),
      "tensor 'a': header nests deeper than the safetensors schema");
  expectOpenFails(fileBytes(R"({"__metadata__":{"k":1}})", data),
                  "__metadata__ entry 'k' is not a string");
  expectOpenFails(fileBytes(R"([{"a":1,"a":2}])", data), ": duplicate key 'a'");
  expectOpenFails(fileBytes(R"({"__metadata__":"x"})", data),
                  "__metadata__ is not a JSON object");
}

TEST(SafetensorsTest, DeeplyNestedHeaderIsRejected) {
  std::string header(100000, '[');
  expectOpenFails(fileBytes(header, ""),
                  ": header nests deeper than the safetensors schema");
  expectOpenFails(
      fileBytes("{\"a\":" + header, ""),
      "tensor 'a': header nests deeper than the safetensors schema");
}

TEST(SafetensorsTest, SizeMismatch) {
  std::string path = testing::TempDir() + "x.safetensors", error;
  writeBytes(path, fileBytes(R"({"h.0.attn.c_attn.weight":{"dtype":"F32",)"
                             R"("shape":[8,8],"data_offsets":[0,100]}})",
                             std::string(100, '\0')));
  EXPECT_EQ(SafetensorsReader::open(path, &error), nullptr);
  EXPECT_EQ(error, path + ": tensor 'h.0.attn.c_attn.weight': data_offsets "
                          "[0, 100) hold 100 bytes but shape [8, 8] of F32 "
                          "needs 256");
}

TEST(SafetensorsTest, TruncatedData) {
  SafetensorsWriter writer;
  std::vector<double> values(64, 1.0);
  writer.add("w", DType::F32, {8, 8}, values.data());
  std::string path = tempPath("full.safetensors"), error;
  ASSERT_TRUE(writer.write(path, &error)) << error;
  std::FILE *file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  std::string bytes(4096, '\0');
  bytes.resize(std::fread(&bytes[0], 1, bytes.size(), file));
  std::fclose(file);
  bytes.resize(bytes.size() - 10);
  expectOpenFails(bytes, "tensor 'w': data_offsets [0, 256) exceed the "
                         "246-byte data section (is the file truncated?)");
}

TEST(SafetensorsTest, WriterErrors) {
  double value = 1.0;
  std::string error;
  {
    SafetensorsWriter writer;
    writer.add("a", DType::F32, {1}, &value);
    writer.add("a", DType::F64, {1}, &value);
    EXPECT_FALSE(writer.write(tempPath("dup.safetensors"), &error));
    EXPECT_NE(error.find("tensor 'a': added twice"), std::string::npos)
        << error;
  }
  {
    SafetensorsWriter writer;
    writer.add("n", DType::F32, {2, -1}, &value);
    EXPECT_FALSE(writer.write(tempPath("neg.safetensors"), &error));
    EXPECT_NE(error.find("tensor 'n': shape [2, -1] has a negative dimension"),
              std::string::npos)
        << error;
  }
  {
    SafetensorsWriter writer;
    writer.add("__metadata__", DType::F32, {1}, &value);
    EXPECT_FALSE(writer.write(tempPath("meta.safetensors"), &error));
    EXPECT_NE(error.find("reserved"), std::string::npos) << error;
  }
}

TEST(SafetensorsTest, WriteIntoAMissingDirectoryCreatesNothing) {
  std::string directory = tempDirectory(), error;
  std::string path = directory + "/missing/y.safetensors";
  double value = 1.0;
  SafetensorsWriter writer;
  writer.add("a", DType::F32, {1}, &value);
  EXPECT_FALSE(writer.write(path, &error));
  EXPECT_EQ(error,
            path + ": cannot open for writing: No such file or directory");
  EXPECT_TRUE(listDirectory(directory).empty());
}

TEST(SafetensorsTest, OverwriteReplacesTheFileWhole) {
  std::string directory = tempDirectory(), error;
  std::string path = directory + "/w.safetensors";
  std::vector<double> big(1000, 2.0);
  SafetensorsWriter first;
  first.add("big", DType::F64, {1000}, big.data());
  ASSERT_TRUE(first.write(path, &error)) << error;
  double value = 3.0;
  SafetensorsWriter second;
  second.add("small", DType::F32, {1}, &value);
  ASSERT_TRUE(second.write(path, &error)) << error;

  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  ASSERT_EQ(reader->tensors().size(), 1u);
  EXPECT_EQ(readAll(*reader, "small"), std::vector<double>{3.0});
  struct stat status;
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  // 8-byte length, a header padded to 64 bytes, 4 bytes of data.
  EXPECT_EQ(status.st_size, 76);
  // No temporary file is left behind.
  EXPECT_EQ(listDirectory(directory),
            std::vector<std::string>{"w.safetensors"});
}

TEST(SafetensorsTest, FailedWriteLeavesTheOldFile) {
  std::string directory = tempDirectory(), error;
  std::string path = directory + "/w.safetensors";
  double value = 5.0;
  SafetensorsWriter good;
  good.add("w", DType::F32, {1}, &value);
  ASSERT_TRUE(good.write(path, &error)) << error;
  SafetensorsWriter bad;
  bad.add("w", DType::F32, {-1}, &value);
  EXPECT_FALSE(bad.write(path, &error));
  std::unique_ptr<SafetensorsReader> reader =
      SafetensorsReader::open(path, &error);
  ASSERT_NE(reader, nullptr) << error;
  EXPECT_EQ(readAll(*reader, "w"), std::vector<double>{5.0});

  // A rename that fails (over a directory) removes the temporary file.
  std::string taken = directory + "/taken";
  ASSERT_EQ(::mkdir(taken.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((taken + "/inside").c_str(), 0755), 0);
  EXPECT_FALSE(good.write(taken, &error));
  EXPECT_EQ(error, taken + ": cannot write: Is a directory");
  EXPECT_EQ(listDirectory(directory),
            (std::vector<std::string>{"taken", "w.safetensors"}));
  EXPECT_EQ(listDirectory(taken), std::vector<std::string>{"inside"});
}

TEST(SafetensorsTest, CheckWritable) {
  std::string directory = tempDirectory(), error;
  EXPECT_TRUE(
      SafetensorsWriter::checkWritable(directory + "/w.safetensors", &error))
      << error;
  EXPECT_TRUE(listDirectory(directory).empty());
  std::string missing = directory + "/missing/w.safetensors";
  EXPECT_FALSE(SafetensorsWriter::checkWritable(missing, &error));
  EXPECT_EQ(error,
            missing + ": cannot open for writing: No such file or directory");
  EXPECT_FALSE(SafetensorsWriter::checkWritable(directory, &error));
  EXPECT_EQ(error, directory + ": is a directory");
}

} // namespace
