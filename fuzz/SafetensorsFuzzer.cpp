//===- SafetensorsFuzzer.cpp - weights files through the reader -----------===//
//
// Any bytes give a reader or an error, never a crash, and every tensor of a
// file that opens converts to double.
//
//===----------------------------------------------------------------------===//

#include "parcrt/Safetensors.h"

#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The reader reads files; one per process, rewritten for each input.
  static const std::string path =
      "/tmp/parc-safetensors-fuzz." + std::to_string(getpid());
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char *>(data),
               static_cast<std::streamsize>(size));
  }
  std::string error;
  std::unique_ptr<parcrt::SafetensorsReader> reader =
      parcrt::SafetensorsReader::open(path, &error);
  if (!reader)
    return 0;
  for (const parcrt::TensorInfo &info : reader->tensors()) {
    // Bounded by the file's size, which the reader checked.
    std::vector<double> values(static_cast<size_t>(info.numElements()));
    reader->readAsDouble(info, values.data());
  }
  return 0;
}
